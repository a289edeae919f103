//go:build ignore

// Pretrain is a stop-gap pretraining of the expression grammar VAE for the
// BO experiment (docs/experiment/README.md), until the train verb exists:
// the plain ELBO (no metric loss, uniform weights) on the reference's
// training subset, the expression KL schedule, Adam 1e-3, batch 256.
//
//	go run docs/experiment/pretrain.go -epochs 10 -out /tmp/vae/gvae.pt
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo/adapters"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/torch"
)

func main() {
	epochs := flag.Int("epochs", 10, "training epochs")
	out := flag.String("out", "gvae.pt", "checkpoint to write")
	seed := flag.Uint64("seed", 0, "seed")
	dataDir := flag.String("data-dir", "", "data directory")
	flag.Parse()
	if err := run(*epochs, *out, *seed, *dataDir); err != nil {
		log.Fatal(err)
	}
}

func run(epochs int, out string, seed uint64, dataDir string) error {
	ds, err := expression.Load(expression.LoadOptions{DataDir: dataDir, Log: os.Stderr})
	if err != nil {
		return err
	}
	var x []float32
	for _, i := range expression.Subset(ds.Scores, 0) {
		oh, err := expression.Encode(ds.Exprs[i])
		if err != nil {
			return err
		}
		x = append(x, oh...)
	}
	if err := torch.ManualSeed(seed); err != nil {
		return err
	}
	net, err := gvae.New(gvae.DefaultConfig(adapters.ExpressionGrammar()))
	if err != nil {
		return err
	}
	elbo, err := models.ParseELBO("lbo")
	if err != nil {
		return err
	}
	tr, err := models.NewTrainer(net, models.TrainOptions{ELBO: elbo, Beta: models.ExpressionBeta(), LR: 1e-3,
		BatchSize: 256, GradClip: models.DefaultGradClip, Device: torch.CPU, Seed: seed})
	if err != nil {
		return err
	}
	start := time.Now()
	return tr.Fit(models.Data{X: x}, models.Data{}, epochs, nil, func(r models.EpochReport) error {
		fmt.Printf("epoch %d: loss %.4f rec %.4f kl %.4f beta %.3g (%.0fs)\n", r.Epoch, r.Train.Total, r.Train.Rec,
			r.Train.KL, r.Train.Beta, time.Since(start).Seconds())
		return gvae.SaveTrainer(out, net, tr, &r)
	})
}
