package bo_test

import (
	"fmt"
	"log"
	"os"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// ExampleRun optimises botest's synthetic task in its model's 3-dimensional
// latent space: two model versions of five evaluations, then a resume that
// extends the budget and reads the first ten back from the journal.
func ExampleRun() {
	p, err := botest.New(3, 8, 1)
	if err != nil {
		log.Fatal(err)
	}
	cfg := bo.DefaultConfig()
	cfg.Budget, cfg.RetrainEvery = 10, 5
	cfg.RankK, cfg.InitialRetrainEpochs, cfg.RetrainEpochs = 1e-3, 1, 1
	cfg.NBest, cfg.NRand, cfg.Inducing = 40, 40, 30
	cfg.RawSamples, cfg.Restarts = 256, 3
	dir, err := os.MkdirTemp("", "bo-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opts := bo.Options{Dir: dir}
	res, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), p.Data(200, 2), opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d evaluations, %d model versions, improved: %v\n",
		res.Evaluated, len(res.Versions), res.Best < res.InitialBest)
	cfg.Budget, opts.Resume = 15, true
	if res, err = bo.Run[[]float64](cfg, p.Task(), p.Model(), p.Data(200, 2), opts); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d evaluations (%d read back from the journal), %d model versions\n",
		res.Evaluated, evaluations(res.Queries[:res.Resumed]), len(res.Versions))
	// Output:
	// 10 evaluations, 2 model versions, improved: true
	// 15 evaluations (10 read back from the journal), 3 model versions
}

// evaluations counts the queries that evaluated their object: not a known
// object, not an invalid decode.
func evaluations(qs []bo.Query) int {
	n := 0
	for _, q := range qs {
		if q.Valid && !q.Known {
			n++
		}
	}
	return n
}
