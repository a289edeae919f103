// Package bench holds what the `bench` verbs share: timing a loop and the
// median of its timings. The timed loops live with their code: the tasks'
// (bench gvae-step in internal/task/expression, bench jtvae-step in
// internal/task/molecule) and the GP's (cmd/tlbo-native).
package bench

import (
	"sort"
	"time"
)

// Repeat runs f warm times untimed, then reps times timed, and returns the
// duration of every timed run.
func Repeat(reps, warm int, f func() error) ([]time.Duration, error) {
	var times []time.Duration
	for i := 0; i < warm+reps; i++ {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		if i >= warm {
			times = append(times, time.Since(start))
		}
	}
	return times, nil
}

// Median returns the median of durations in milliseconds.
func Median(ds []time.Duration) float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d.Microseconds()) / 1000
	}
	return MedianFloat(ms)
}

// MedianFloat returns the median of xs (0 for none), sorting xs.
func MedianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}
