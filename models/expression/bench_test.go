package expression

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// BenchmarkTrainBatch times one optimiser step of a batch of 256 (LBO and T-LBO).
func BenchmarkTrainBatch(b *testing.B) {
	x, y, _ := randomDerivations(256, 1)
	for _, elbo := range []string{"lbo", "t"} {
		b.Run(elbo, func(b *testing.B) {
			t := &testing.T{}
			m, err := New(DefaultConfig(testGrammar()))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			tr := tinyTrainer(t, m, elbo)
			for b.Loop() {
				if _, err := tr.TrainBatch(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = torch.CPU
}
