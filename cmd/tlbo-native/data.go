package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/task"
)

// dataCommand groups the data-set builders, one subcommand per task.
func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "build a task's data set files",
		Subcommands: perTask(func(t task.Task) *cli.Command {
			return &cli.Command{
				Name:  t.Name(),
				Usage: "write the " + t.Name() + " data set files into --out",
				Flags: append(append([]cli.Flag{
					&cli.StringFlag{Name: "out", Usage: "output directory", Required: true},
					&cli.Uint64Flag{Name: "seed", Usage: "seed of every random draw"},
				}, dataFlags()...), optionFlagsOf(t)...),
				Action: func(c *cli.Context) error {
					env, err := taskEnv(c, t)
					if err != nil {
						return err
					}
					ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
					defer stop()
					env.Progress, env.Ctx = newProgress(), ctx
					return t.BuildData(env, c.String("out"))
				},
			}
		}),
	}
}

// perTask returns one subcommand per registered task.
func perTask(build func(task.Task) *cli.Command) []*cli.Command {
	var cmds []*cli.Command
	for _, name := range task.Names() {
		t, _ := task.Lookup(name)
		cmds = append(cmds, build(t))
	}
	return cmds
}

// optionFlagsOf returns the flags of t's own options, defaults shown.
func optionFlagsOf(t task.Task) []cli.Flag {
	var flags []cli.Flag
	for _, o := range t.Options() {
		flags = append(flags, &cli.StringFlag{Name: o.Name, Value: o.Default, Usage: o.Usage})
	}
	return flags
}

// scoreCommand groups the black-box objectives, one subcommand per task.
func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "evaluate a task's black-box objective",
		Subcommands: perTask(func(t task.Task) *cli.Command {
			return &cli.Command{
				Name:      t.Name(),
				Usage:     "print the objective of each object, one line each (" + t.Usage() + ")",
				ArgsUsage: "OBJECT... (none: one per line on stdin)",
				Description: "One output line per input, in input order (on stdin every line is an input, a blank one\n" +
					"included). An input that cannot be scored gets the task's failure score, a tab and the reason\n" +
					"on its line; the exit status is then 1, after every line has been printed.",
				Flags: optionFlagsOf(t),
				Action: func(c *cli.Context) error {
					env, err := taskEnv(c, t)
					if err != nil {
						return err
					}
					return t.Score(env, c.Args().Slice())
				},
			}
		}),
	}
}

// codecCommands are encode and decode: a task's objects to latent points
// and back, with a checkpoint.
func codecCommands() []*cli.Command {
	common := func() []cli.Flag {
		return append([]cli.Flag{taskFlag(),
			&cli.StringFlag{Name: "vae", Usage: "checkpoint FILE.pt (with FILE.json)", Required: true},
			&cli.StringFlag{Name: "in", Required: true},
			&cli.StringFlag{Name: "out", Required: true},
			deviceFlag, threadsFlag,
		}, taskOptionFlags()...)
	}
	open := func(c *cli.Context) (task.Task, *task.Env, error) {
		t, err := lookupTask(c)
		if err != nil {
			return nil, nil, err
		}
		env, err := taskEnv(c, t)
		if err != nil {
			return nil, nil, err
		}
		if env.Device, err = setupTorch(c); err != nil {
			return nil, nil, err
		}
		return t, env, nil
	}
	encode := &cli.Command{
		Name:  "encode",
		Usage: "write the encoder means (float64 .npy, one row per object) of the objects in --in",
		Description: "--in holds objects in the task's own format: a text file of expressions or SMILES, one per\n" +
			"line, or a .npy of designs.",
		Flags: common(),
		Action: func(c *cli.Context) error {
			t, env, err := open(c)
			if err != nil {
				return err
			}
			return t.Encode(env, task.EncodeRequest{VAE: c.String("vae"), In: c.String("in"), Out: c.String("out")})
		},
	}
	decode := &cli.Command{
		Name:  "decode",
		Usage: "decode the latent points of --in (.npy, n x latent) into objects in --out",
		Description: "--out gets one object per line (or a .npy of designs); an invalid decode is an empty line\n" +
			"(an empty design), counted on stderr.",
		Flags: append(common(),
			&cli.Uint64Flag{Name: "seed", Usage: "seed of stochastic decoding"},
			&cli.BoolFlag{Name: "greedy", Usage: "decode deterministically (the most likely choice at each step)"},
			&cli.IntFlag{Name: "attempts", Usage: "stochastic decodings per point (0: the network's default)"}),
		Action: func(c *cli.Context) error {
			t, env, err := open(c)
			if err != nil {
				return err
			}
			return t.Decode(env, task.DecodeRequest{VAE: c.String("vae"), In: c.String("in"), Out: c.String("out"),
				Decode: task.DecodeOptions{Attempts: c.Int("attempts"), Greedy: c.Bool("greedy")}})
		},
	}
	return []*cli.Command{encode, decode}
}
