package models

import (
	"fmt"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// BenchmarkMetricLosses times forward and backward of the metric losses on
// batches of 256 and 1,024 latent points of size 25 with uniform labels (the
// expression and topology tasks' batch sizes).
func BenchmarkMetricLosses(b *testing.B) {
	if err := torch.ManualSeed(1); err != nil {
		b.Fatal(err)
	}
	for _, size := range []int64{256, 1024} {
		z0 := torch.Randn([]int64{size, 25}, torch.Float32, torch.CPU)
		defer z0.Close()
		y0 := torch.Rand([]int64{size}, torch.Float32, torch.CPU)
		defer y0.Close()
		for name, m := range map[string]Metric{
			"simple":      {Kind: MetricSimple},
			"contrastive": {Kind: MetricContrastive, Eta: 0.1},
			"triplet":     {Kind: MetricTriplet, Eta: 0.1},
			"triplet-nu":  {Kind: MetricTriplet, Eta: 0.1, Nu: 0.05},
			"hard":        {Kind: MetricHardTriplet, Eta: 0.1, Margin: 1},
			"log-ratio":   {Kind: MetricLogRatio},
		} {
			b.Run(fmt.Sprintf("%s/b%d", name, size), func(b *testing.B) {
				for b.Loop() {
					sc := torch.NewScope()
					z := sc.Own(z0.Clone()).SetRequiresGrad(true)
					if err := m.Loss(z, sc.Own(y0.Clone())).Backward(); err != nil {
						b.Fatal(err)
					}
					if g, err := z.Grad(); err == nil {
						g.Close()
					}
					sc.Close()
				}
			})
		}
	}
}
