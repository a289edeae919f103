package dashboard

import (
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// MapPoint is an evaluated latent point projected to 2-D.
type MapPoint struct {
	Query  int  `json:"query"`
	X      num  `json:"x"`
	Y      num  `json:"y"`
	Score  num  `json:"score"`
	Failed bool `json:"failed,omitempty"`
}

// latentMap projects the latent points of the run's evaluated queries on
// their first two principal components (the axes of largest variance).
// Queries whose point has another dimension than the first's are left out;
// fewer than three points, or a 1-D latent space, are drawn as they are.
func (r *Run) latentMap() []MapPoint {
	qs := r.state.complete()
	var idx []int
	dim := 0
	for i, q := range qs {
		if len(q.Z) == 0 || (dim > 0 && len(q.Z) != dim) {
			continue
		}
		dim = len(q.Z)
		idx = append(idx, i)
	}
	out := make([]MapPoint, len(idx))
	for k, i := range idx {
		q := qs[i]
		out[k] = MapPoint{Query: q.Index, Score: num(q.Score), Failed: q.Failure != "" || !q.Valid}
		out[k].X = num(q.Z[0])
		if dim > 1 {
			out[k].Y = num(q.Z[1])
		}
	}
	if len(idx) < 3 || dim < 3 {
		return out
	}
	x := mat.NewDense(len(idx), dim, nil)
	for k, i := range idx {
		x.SetRow(k, qs[i].Z)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(x, nil) {
		return out // the SVD did not converge: the first two coordinates
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	var proj mat.Dense
	proj.Mul(x, vecs.Slice(0, dim, 0, 2))
	for k := range out {
		out[k].X, out[k].Y = num(proj.At(k, 0)), num(proj.At(k, 1))
	}
	return out
}
