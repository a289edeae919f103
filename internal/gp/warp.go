package gp

import "math"

// warpEps keeps warped inputs away from 0 and 1, where the Kumaraswamy CDF's
// derivatives are singular (as BoTorch's Warp transform does).
const warpEps = 1e-7

// warpClamp maps x from [0, 1] into [eps, 1-eps]; values outside the unit
// interval are clamped, and the returned slope is 0 there.
func warpClamp(x float64) (xc, slope float64) {
	const scale = 1 - 2*warpEps
	xc = x*scale + warpEps
	switch {
	case xc < warpEps:
		return warpEps, 0
	case xc > 1-warpEps:
		return 1 - warpEps, 0
	}
	return xc, scale
}

// kumaraswamy returns the Kumaraswamy CDF w = 1 - (1 - x^a)^b of the clamped
// input together with dw/dx (through the clamp), dw/da and dw/db.
func kumaraswamy(x, a, b float64) (w, dx, da, db float64) {
	xc, slope := warpClamp(x)
	lx := math.Log(xc)
	xa := math.Exp(a * lx)           // x^a
	om := -math.Expm1(a * lx)        // 1 - x^a, accurate for x^a near 1
	lom := math.Log(om)              // log(1 - x^a)
	omb := math.Exp(b * lom)         // (1 - x^a)^b
	ombm1 := math.Exp((b - 1) * lom) // (1 - x^a)^(b-1)
	w = 1 - omb
	dx = a * b * math.Exp((a-1)*lx) * ombm1 * slope
	da = b * ombm1 * xa * lx
	db = -omb * lom
	return w, dx, da, db
}
