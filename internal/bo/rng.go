package bo

import "math/rand/v2"

// Streams of derived randomness. Each random choice of a run draws from a
// generator seeded by (run seed, stream, index), so that a resumed run makes
// the same choices without replaying any long-lived generator.
const (
	streamLabelled uint64 = iota + 1 // semi-supervised labelled subset
	streamRetrain                    // retraining of version v
	streamSubset                     // GP subset of version v
	streamSamples                    // prior samples of version v
	streamGPFit                      // GP fit of query i (k-means seeding)
	streamAcq                        // acquisition of query i
	streamDecode                     // decoding of query i
	streamPerturb                    // perturbations of query i
	streamFallback                   // random fallback point of query i
	streamRedo                       // redone acquisition steps of query i
	streamBall                       // ball fallback of a round (RepeatsSkip)
)

// mix is the SplitMix64 finaliser, a bijection with good avalanche.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// deriveSeed returns the seed of stream at index for a run seeded with seed.
func deriveSeed(seed, stream, index uint64) uint64 {
	return mix(mix(mix(seed)^stream) ^ index)
}

// newRand returns a generator for stream at index.
func newRand(seed, stream, index uint64) *rand.Rand {
	return randFrom(deriveSeed(seed, stream, index))
}

// randFrom returns a generator seeded by a derived seed.
func randFrom(s uint64) *rand.Rand { return rand.New(rand.NewPCG(s, mix(s))) }

// attemptSeed returns the seed of stream for attempt a of query i: the
// first attempt draws as a query without redos does, a redone one afresh.
func attemptSeed(seed, stream, i uint64, a int) uint64 {
	s := deriveSeed(seed, stream, i)
	if a == 0 {
		return s
	}
	return deriveSeed(s, streamRedo, uint64(a))
}
