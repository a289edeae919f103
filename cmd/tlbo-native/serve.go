package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/dashboard"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a read-only web dashboard of the runs under a directory, updated while they run",
		Description: "Every run directory (config.json and journal.jsonl, or a committed run's journal.jsonl.gz)\n" +
			"under --runs is listed; a run page shows the best score against distinct evaluations (runs that\n" +
			"differ only in the seed as a mean with a band, as plot draws them), progress and time left, the\n" +
			"best objects, the GP's fit per round, the trust region and a PCA map of the latent points. The\n" +
			"pages poll the server every few seconds: a run being written is followed without a reload.\n" +
			"It listens on 127.0.0.1 unless --addr says otherwise, serves nothing outside --runs and writes nothing.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "runs", Usage: "directory whose run directories are served (required)"},
			&cli.StringFlag{Name: "addr", Value: dashboard.DefaultAddr, Usage: "address to listen on (host:port); another host than 127.0.0.1 makes the runs visible to the network"},
		},
		Action: func(c *cli.Context) error {
			if c.String("runs") == "" {
				return fmt.Errorf("serve: --runs is required")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return dashboard.Serve(ctx, c.String("runs"), c.String("addr"), c.App.Writer)
		},
	}
}
