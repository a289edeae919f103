package acq

import "math"

const (
	sqrt2      = math.Sqrt2
	logSqrt2Pi = 0.91893853320467274178032973640562 // log(2π)/2
	logSqrtPi2 = 0.22579135264472743236             // log(π/2)/2
	invSqrtPi  = 0.56418958354775628694807945156077 // 1/√π
	varFloor   = 1e-30                              // guards σ = √var
)

// normCDF returns Φ(z).
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/sqrt2) }

// normPDF returns φ(z).
func normPDF(z float64) float64 { return math.Exp(-0.5*z*z - logSqrt2Pi) }

// erfcx returns the scaled complementary error function exp(x²) erfc(x)
// for x >= 0 without overflow: directly for small x, by its continued
// fraction for large x.
func erfcx(x float64) float64 {
	if x < 0 {
		return 2*math.Exp(x*x) - erfcx(-x)
	}
	if x < 2.5 {
		return math.Exp(x*x) * math.Erfc(x)
	}
	// erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + ...)))),
	// evaluated from the tail; 60 terms give full precision for x >= 2.5.
	t := x
	for k := 60; k >= 1; k-- {
		t = x + float64(k)/2/t
	}
	return invSqrtPi / t
}

// log1mexp returns log(1 - exp(a)) for a < 0 (Mächler 2012).
func log1mexp(a float64) float64 {
	if a > -math.Ln2 {
		return math.Log(-math.Expm1(a))
	}
	return math.Log1p(-math.Exp(a))
}

// logH returns log h(z) with h(z) = φ(z) + zΦ(z) (so that EI = σ h(z)),
// together with the ratios Φ(z)/h(z) = d log h/dz and φ(z)/h(z), all stable
// far into the lower tail (Ament et al. 2023, eq. 9).
func logH(z float64) (lh, cdfRatio, pdfRatio float64) {
	if z > -1 {
		pdf, cdf := normPDF(z), normCDF(z)
		h := pdf + z*cdf
		return math.Log(h), cdf / h, pdf / h
	}
	if z < -1/math.Sqrt(2.220446049250313e-16) {
		// h(z) ≈ φ(z)/z², Φ(z)/h(z) ≈ -z, φ(z)/h(z) ≈ z².
		return -0.5*z*z - logSqrt2Pi - 2*math.Log(-z), -z, z * z
	}
	// h(z) = φ(z) [1 - √(π/2) |z| erfcx(-z/√2)] for z < 0.
	ex := erfcx(-z / sqrt2)
	l1 := log1mexp(math.Log(ex*(-z)) + logSqrtPi2)
	lh = -0.5*z*z - logSqrt2Pi + l1
	// log Φ(z) = log(erfcx(-z/√2)/2) - z²/2, so Φ/h = exp(log(ex/2) + log√2π - l1).
	cdfRatio = math.Exp(math.Log(0.5*ex) + logSqrt2Pi - l1)
	pdfRatio = math.Exp(-l1)
	return lh, cdfRatio, pdfRatio
}

// zFar bounds the standardised improvement z that log EI is computed at:
// beyond it z² overflows. Log EI is below -5e199 there, and its value at
// -zFar stands for every z below (a documented clamp: no maximiser goes
// there while any point does better); above +zFar, EI is mean - bestF to
// the last bit.
const zFar = 1e100

// improvement returns mean - bestF, ±MaxFloat64 where that overflows.
func improvement(mean, bestF float64) float64 {
	d := mean - bestF
	if math.IsInf(d, 0) {
		return math.Copysign(math.MaxFloat64, d)
	}
	return d
}

// EI returns the expected improvement E[max(f - bestF, 0)] of a Gaussian
// f ~ N(mean, variance) and its partial derivatives with respect to mean
// and variance, finite for every finite input. It underflows to 0 far
// below bestF; use LogEI there.
func EI(mean, variance, bestF float64) (v, dMean, dVar float64) {
	sigma := math.Sqrt(math.Max(variance, varFloor))
	d := improvement(mean, bestF)
	z := d / sigma
	cdf, pdf := normCDF(z), normPDF(z)
	v = sigma * (pdf + z*cdf)
	if z > -1 {
		v = math.Max(v, 0)
		if math.IsInf(v, 1) || math.IsNaN(v) {
			// σ z overflowed: z is far above zFar, where EI is d.
			v = d
		}
	} else {
		// σ h(z) from its logarithm, accurate where pdf + z·cdf cancels.
		lh, _, _ := logH(z)
		v = sigma * math.Exp(lh)
	}
	dMean = cdf
	if variance > varFloor {
		dVar = pdf / (2 * sigma)
	}
	return v, dMean, dVar
}

// LogEI returns log EI(mean, variance, bestF), finite for every finite
// input (about -z²/2 far in the tail, z clamped at -zFar), and its partial
// derivatives with respect to mean and variance.
func LogEI(mean, variance, bestF float64) (v, dMean, dVar float64) {
	sigma := math.Sqrt(math.Max(variance, varFloor))
	d := improvement(mean, bestF)
	z := d / sigma
	if z > zFar {
		// h(z) = z to the last bit: log EI = log(σ z) = log d.
		return math.Log(d), 1 / d, 0
	}
	z = math.Max(z, -zFar)
	lh, cdfRatio, pdfRatio := logH(z)
	v = math.Log(sigma) + lh
	dMean = cdfRatio / sigma
	if variance > varFloor {
		// ∂/∂σ [log σ + log h(z)] = (1 - zΦ/h)/σ = (φ/h)/σ.
		dVar = pdfRatio / sigma / (2 * sigma)
	}
	return v, dMean, dVar
}

// UCB returns the upper confidence bound mean + √beta σ and its partial
// derivatives with respect to mean and variance.
func UCB(mean, variance, beta float64) (v, dMean, dVar float64) {
	sigma := math.Sqrt(math.Max(variance, varFloor))
	sb := math.Sqrt(beta)
	v = mean + sb*sigma
	if variance > varFloor {
		dVar = sb / (2 * sigma)
	}
	return v, 1, dVar
}
