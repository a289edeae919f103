package expression

import "testing"

// BenchmarkTrainBatch times one optimiser step of a batch of 256 (LBO and T-LBO).
func BenchmarkTrainBatch(b *testing.B) {
	x, y, _ := randomDerivations(256, 1)
	for _, elbo := range []string{"lbo", "t"} {
		b.Run(elbo, func(b *testing.B) {
			m, err := New(DefaultConfig(testGrammar()))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			tr := tinyTrainer(b, m, elbo)
			ex := dense(b, x)
			for b.Loop() {
				if _, err := tr.TrainBatch(ex, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
