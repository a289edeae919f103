package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// BenchmarkMetricLosses times forward and backward of the metric losses on
// batches of 256 and 1,024 latent points of size 25 with uniform labels (the
// expression and topology tasks' batch sizes); "far" scales the points by 12,
// so that many triplets' softplus terms lie far in the tail (latent
// distances up to about 100, as a soft-triplet topology VAE's reach).
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
			"simple":         {Kind: MetricSimple},
			"contrastive":    {Kind: MetricContrastive, Eta: 0.1},
			"triplet":        {Kind: MetricTriplet, Eta: 0.1},
			"triplet-nu":     {Kind: MetricTriplet, Eta: 0.1, Nu: 0.05},
			"hard":           {Kind: MetricHardTriplet, Eta: 0.1, Margin: 1},
			"log-ratio":      {Kind: MetricLogRatio},
			"triplet-nu-far": {Kind: MetricTriplet, Eta: 0.1, Nu: 0.05},
		} {
			scale := 1.0
			if strings.HasSuffix(name, "-far") {
				scale = 12
			}
			b.Run(fmt.Sprintf("%s/b%d", name, size), func(b *testing.B) {
				for b.Loop() {
					sc := torch.NewScope()
					z := sc.Own(z0.MulScalar(scale)).SetRequiresGrad(true)
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
