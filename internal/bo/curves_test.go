package bo_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

func TestBestCurve(t *testing.T) {
	got := bo.BestCurve(3, []float64{4, 2, 5, 1}, false)
	if want := []float64{3, 3, 2, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("minimising: %v, want %v", got, want)
	}
	got = bo.BestCurve(3, []float64{4, 2, 5, 1}, true)
	if want := []float64{3, 4, 4, 5, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("maximising: %v, want %v", got, want)
	}
}

func TestGroupCurves(t *testing.T) {
	fields := func(strategy, seed string) []bo.Field {
		return []bo.Field{{"strategy", strategy}, {"seed", seed}, {"elbo", "t"}}
	}
	curves := []bo.Curve{
		{Dir: "a", Fields: fields("bo", "1"), Best: []float64{3, 2, 1}},
		{Dir: "b", Fields: fields("random", "1"), Best: []float64{3, 3}},
		{Dir: "c", Fields: fields("bo", "2"), Best: []float64{3, 1, 1, 0}},
	}
	g := bo.GroupCurves(curves)
	if len(g) != 2 || len(g[0].Runs) != 2 || len(g[1].Runs) != 1 {
		t.Fatalf("groups %+v, want bo (2 runs) and random (1 run)", g)
	}
	if g[0].Label != "strategy=bo" || g[1].Label != "strategy=random" {
		t.Errorf("labels %q %q, want strategy=bo and strategy=random", g[0].Label, g[1].Label)
	}
	if want := []float64{3, 1.5, 1}; !reflect.DeepEqual(g[0].Mean, want) {
		t.Errorf("mean %v, want %v (the shortest run's length)", g[0].Mean, want)
	}
	if want := []float64{0, math.Sqrt(0.5), 0}; math.Abs(g[0].Std[1]-want[1]) > 1e-15 || g[0].Std[0] != 0 {
		t.Errorf("std %v, want %v", g[0].Std, want)
	}
}
