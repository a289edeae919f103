package expression

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	fx "github.com/tlbo-native/tlbo-native/internal/fixture"
	"github.com/tlbo-native/tlbo-native/internal/task"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestDecodeMatchesAuthors encodes and greedily decodes with the shipped networks
// (pretrained/expression-lbo.pt and -t.pt) what the T-LBO authors' own encoder and
// decoder (HEBO's equation_vae.py and expr_model_pt.py, run on the same state dicts by
// testdata/expression/gen_decode_fixture.py) encoded and decoded: 300 data-set
// expressions, their encoder means, noisy means and prior samples, 800 latent points a
// network. The means must agree to 1e-4 (float32 networks, possibly on two libtorch
// builds; here they are equal) and every decode must be the same expression, invalid
// ones included. This is the check behind the claim that the
// networks' greedy reconstruction (37.4% and 25.1% of 1,000 data expressions) is the
// networks', not our decoder's.
func TestDecodeMatchesAuthors(t *testing.T) {
	set := fx.Load(t, "expression", "decode_fixture.npz")
	exprs := fx.Data[[]string](t, set, "expr")
	for _, net := range []string{"lbo", "t"} {
		t.Run(net, func(t *testing.T) {
			path := "../../../pretrained/expression-" + net + ".pt"
			blob, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(blob)
			if want := fx.Data[[]string](t, set, net+"_sha256")[0]; hex.EncodeToString(sum[:]) != want {
				t.Fatalf("%s has changed since the fixture was written (sha256 %x, fixture %s): rerun testdata/expression/gen_decode_fixture.py", path, sum, want)
			}
			m, _, err := gvae.Load(path, torch.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()

			var x []float32
			for _, e := range exprs {
				oh, err := Encode(e)
				if err != nil {
					t.Fatal(err)
				}
				x = append(x, oh...)
			}
			mu, err := m.EncodeMeans(x)
			if err != nil {
				t.Fatal(err)
			}
			fx.Close(t, net+" encoder means", mu, set.Float64s(t, net+"_mu"), 1e-4, 0)

			z := set.Float64s(t, net+"_z")
			want := fx.Data[[]string](t, set, net+"_decoded")
			got, valid, err := decode(m, z, task.DecodeOptions{Greedy: true}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d decodes, fixture has %d", len(got), len(want))
			}
			bad, hits := 0, 0
			for i := range got {
				g := strings.ReplaceAll(got[i], " ", "")
				if !valid[i] {
					g = ""
				}
				if g != want[i] {
					if bad++; bad <= 5 {
						t.Errorf("point %d: decoded %q, the authors' decoder %q", i, g, want[i])
					}
				}
				if i < len(exprs) && g == strings.ReplaceAll(exprs[i], " ", "") {
					hits++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d decodes differ from the authors'", bad, len(got))
			}
			t.Logf("%s: %d of %d expressions reconstructed greedily (the authors' decoder: the same)", net, hits, len(exprs))
		})
	}
}
