package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// dataCommand groups the data-set builders, one subcommand per task.
func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "build a task's data set files",
		Subcommands: perTask(func(t task.Task) *cli.Command {
			cmd := &cli.Command{
				Name:  t.Name(),
				Usage: "write the " + t.Name() + " data set files into --out",
				Flags: append(append([]cli.Flag{
					&cli.StringFlag{Name: "out", Usage: "output directory", Required: true},
					&cli.Uint64Flag{Name: "seed", Usage: "seed of every random draw"},
				}, dataFlags()...), optionFlags(t, task.VerbData)...),
				Action: func(c *cli.Context) error {
					if err := cliutil.NoArgs(c); err != nil {
						return err
					}
					env, err := taskEnv(c, t, task.VerbData)
					if err != nil {
						return err
					}
					ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
					defer stop()
					env.Progress, env.Ctx = newProgress(), ctx
					return t.BuildData(env, c.String("out"))
				},
			}
			cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
				return usageError("data "+t.Name(), string(task.VerbData), t, err)
			}
			return cmd
		}),
	}
}

// scoreCommand groups the black-box objectives, one subcommand per task.
func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "evaluate a task's black-box objective",
		Subcommands: perTask(func(t task.Task) *cli.Command {
			cmd := &cli.Command{
				Name:      t.Name(),
				Usage:     "print the objective of each object, one line each (" + t.Usage() + ")",
				ArgsUsage: "OBJECT... (none: one per line on stdin)",
				Description: "One output line per input, in input order (on stdin every line is an input, a blank one\n" +
					"included). An input that cannot be scored gets the task's failure score, a tab and the reason\n" +
					"on its line; the exit status is then 1, after every line has been printed.",
				Flags: optionFlags(t, task.VerbScore),
				Action: func(c *cli.Context) error {
					env, err := taskEnv(c, t, task.VerbScore)
					if err != nil {
						return err
					}
					return t.Score(env, c.Args().Slice())
				},
			}
			cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
				return usageError("score "+t.Name(), string(task.VerbScore), t, err)
			}
			return cmd
		}),
	}
}

// codecFlags are the flags encode and decode share; in and out describe
// their files.
func codecFlags(t task.Task, in, out string) []cli.Flag {
	return []cli.Flag{taskFlag(t, true),
		&cli.StringFlag{Name: "vae", Usage: "checkpoint FILE.pt (with FILE.json, which names the network and so the task)", Required: true, TakesFile: true},
		&cli.StringFlag{Name: "in", Usage: in, Required: true, TakesFile: true},
		&cli.StringFlag{Name: "out", Usage: out, Required: true},
		cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
	}
}

// codecEnv is the environment of encode and decode.
func codecEnv(c *cli.Context, t task.Task, verb task.Verb) (*task.Env, error) {
	if err := cliutil.NoArgs(c); err != nil {
		return nil, err
	}
	if err := cliutil.CheckOutFile("out", c.String("out")); err != nil {
		return nil, err
	}
	env, err := taskEnv(c, t, verb)
	if err != nil {
		return nil, err
	}
	if env.Device, err = cliutil.SetupTorch(c); err != nil {
		return nil, err
	}
	return env, nil
}

// encodeCommand writes the encoder means of a task's objects.
func encodeCommand() *cli.Command {
	return taskVerb{
		name:  "encode",
		usage: "write the encoder means (float64 .npy, one row per object) of the objects in --in",
		description: "--in holds objects in the task's own format: a text file of expressions or SMILES, one per\n" +
			"line, or a .npy of designs. The task is that of --vae's network unless --task says it (a --task\n" +
			"that disagrees is refused); molecules are featurised over the checkpoint's own vocabulary.",
		verb:    task.VerbEncode,
		fromVAE: true,
		flags: func(t task.Task) []cli.Flag {
			return append(codecFlags(t, "objects in the task's format", "encoder means, .npy (n x latent, float64)"),
				&cli.BoolFlag{Name: "skip-invalid", Usage: "an object the network cannot take (e.g. a molecule RDKit cannot kekulize, or " +
					"with a ring the vocabulary lacks, or an expression outside the grammar) gets a row of NaN, named with its reason on stderr, instead of failing the whole file"})
		},
		action: func(c *cli.Context, t task.Task) error {
			env, err := codecEnv(c, t, task.VerbEncode)
			if err != nil {
				return err
			}
			return t.Encode(env, task.EncodeRequest{VAE: c.String("vae"), In: c.String("in"), Out: c.String("out"),
				SkipInvalid: c.Bool("skip-invalid")})
		},
	}.command()
}

// decodeCommand writes the objects decoded from latent points.
func decodeCommand() *cli.Command {
	return taskVerb{
		name:  "decode",
		usage: "decode the latent points of --in (.npy, n x latent) into objects in --out",
		description: "--out gets one object per line (or a .npy of designs); an invalid decode is an empty line\n" +
			"(an empty design), counted on stderr. The task is that of --vae's network unless --task says it.",
		verb:    task.VerbDecode,
		fromVAE: true,
		flags: func(t task.Task) []cli.Flag {
			return append(codecFlags(t, "latent points, .npy (n x latent, float64 or float32)", "decoded objects in the task's format"),
				&cli.Uint64Flag{Name: "seed", Usage: "seed of stochastic decoding"},
				&cli.BoolFlag{Name: "greedy", Usage: "decode deterministically (the most likely choice at each step)"},
				&cli.IntFlag{Name: "attempts", Usage: "stochastic decodings per point (0: the network's default)"})
		},
		action: func(c *cli.Context, t task.Task) error {
			if c.Int("attempts") < 0 {
				return fmt.Errorf("--attempts %d: want at least 0", c.Int("attempts"))
			}
			env, err := codecEnv(c, t, task.VerbDecode)
			if err != nil {
				return err
			}
			return t.Decode(env, task.DecodeRequest{VAE: c.String("vae"), In: c.String("in"), Out: c.String("out"),
				Decode: task.DecodeOptions{Attempts: c.Int("attempts"), Greedy: c.Bool("greedy")}})
		},
	}.command()
}
