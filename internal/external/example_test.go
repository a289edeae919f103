package external_test

import (
	"fmt"
	"log"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/external"
)

// A command objective built from a program that scores a file (here: its
// size in bytes, with wc), through the shell wrapper of examples/. The
// command line is split as a shell would split it, without running one:
// the quotes keep "<" and "$1" for the inner sh.
func ExampleCommand() {
	c, err := external.NewCommand(`../../examples/per_file.sh sh -c 'wc -c <"$1"' sh`,
		external.CommandOptions{Workers: 2, Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, smiles := range []string{"C#N", `F/C=C\F`, "c1ccccc1[N+](=O)[O-]"} {
		score, err := c.Score(smiles) // safe for concurrent use
		if err != nil {
			log.Fatal(err) // a *external.Failure: its message is the reason
		}
		fmt.Println(smiles, score)
	}
	// Output:
	// C#N 4
	// F/C=C\F 8
	// c1ccccc1[N+](=O)[O-] 21
}
