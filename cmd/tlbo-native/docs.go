package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// commandsDoc is docs/commands.md, relative to the checkout's root.
const commandsDoc = "docs/commands.md"

// notesMarker separates the hand-written part of commandsDoc (above) from
// the reference generated from the command line (below).
const notesMarker = "<!-- Generated below by `go run ./cmd/tlbo-native docs commands`: edit the flags in the code, not here. -->"

// regenerateDoc is the command that rewrites commandsDoc, from the checkout's
// root (after ./build.sh build, which makes build/ that go run links).
const regenerateDoc = "go run ./cmd/tlbo-native docs commands"

// docsCommand is the hidden verb that writes the documentation generated
// from the command line itself.
func docsCommand() *cli.Command {
	return &cli.Command{
		Name:   "docs",
		Usage:  "write documentation generated from the command line",
		Hidden: true,
		Subcommands: []*cli.Command{{
			Name: "commands",
			Usage: "rewrite the generated reference of --out (every verb's flags and each task's options, in markdown) " +
				"below its marker line, keeping the hand-written part above it",
			Flags: []cli.Flag{&cli.StringFlag{Name: "out", Value: commandsDoc, Usage: "the page to rewrite", TakesFile: true}},
			Action: func(c *cli.Context) error {
				return writeCommandsDoc(c.String("out"))
			},
		}},
	}
}

// writeCommandsDoc rewrites path: its part up to the marker line kept (a
// title only when path is new), the reference generated after it.
func writeCommandsDoc(path string) error {
	head := "# Commands\n\n" + notesMarker + "\n"
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		h, _, ok := splitCommandsDoc(string(b))
		if !ok {
			return fmt.Errorf("%s has no marker line %q: add it where the generated reference starts", path, notesMarker)
		}
		head = h
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	ref, err := commandsReference()
	if err != nil {
		return err
	}
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, head+ref)
		return err
	})
}

// splitCommandsDoc splits the page at the marker: the head includes the
// marker's line.
func splitCommandsDoc(page string) (head, ref string, ok bool) {
	i := strings.Index(page, notesMarker+"\n")
	if i < 0 {
		return "", "", false
	}
	end := i + len(notesMarker) + 1
	return page[:end], page[end:], true
}

// commandsReference is the generated part of commandsDoc: urfave/cli's
// markdown of the command line, in which each task verb (whose flags
// depend on the task) appears with the flags it has without a task, and
// one section per task with the options that task adds.
func commandsReference() (string, error) {
	app := newApp()
	cmds, err := docCommands(app.Commands, "")
	if err != nil {
		return "", err
	}
	app.Commands = cmds
	md, err := app.ToMarkdown()
	if err != nil {
		return "", fmt.Errorf("markdown of the command line: %w", err)
	}
	return "\n" + pageMarkdown(md), nil
}

// docCommands returns the visible commands of cmds (under the verb path
// parent) as the reference shows them: named by their whole path, their
// description after their usage, a usage line with their arguments, and
// each task verb expanded.
func docCommands(cmds []*cli.Command, parent string) ([]*cli.Command, error) {
	var out []*cli.Command
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		v, isVerb, err := verbOf(c)
		if err != nil {
			return nil, err
		}
		if isVerb {
			c = verbDoc(v)
		}
		path := strings.TrimSpace(parent + " " + c.Name)
		sub, err := docCommands(c.Subcommands, path)
		if err != nil {
			return nil, err
		}
		usage := c.Usage
		if c.Description != "" {
			usage += "\n\n" + c.Description
		}
		out = append(out, &cli.Command{Name: path, Usage: usage, UsageText: usageLine(c, path, isVerb || len(sub) == 0),
			Flags: c.Flags, Subcommands: sub})
	}
	return out, nil
}

// usageLine is the reference's synopsis of c, whose whole name is path:
// how it runs, and whether it has subcommands unless leaf says it has
// none (a task verb's subcommands are the tasks' sections).
func usageLine(c *cli.Command, path string, leaf bool) string {
	var forms []string
	if c.Action != nil || leaf {
		line := "tlbo-native " + path
		if len(c.VisibleFlags()) > 0 {
			line += " [options]"
		}
		if a := strings.TrimSpace(c.ArgsUsage); a != "" {
			line += " " + a
		}
		forms = append(forms, line)
	}
	if !leaf {
		forms = append(forms, "tlbo-native "+path+" COMMAND ...")
	}
	return strings.Join(forms, " | ")
}

// verbDoc is the reference's command of a task verb: its flags without a
// task, and as subcommands, one per task, the flags that task adds.
func verbDoc(v taskVerb) *cli.Command {
	c := v.build(nil)
	c.ArgsUsage = v.argsUsage
	have := map[string]bool{}
	for _, f := range c.Flags {
		have[f.Names()[0]] = true
	}
	for _, name := range task.Names() {
		t, _ := task.Lookup(name)
		var own []cli.Flag
		for _, f := range v.build(t).Flags {
			if !have[f.Names()[0]] {
				own = append(own, f)
			}
		}
		if len(own) == 0 {
			continue
		}
		c.Subcommands = append(c.Subcommands, &cli.Command{Name: "--task " + name,
			Usage: fmt.Sprintf("The options that task %s adds to %s. The task: %s.", name, v.name, t.Usage()), Flags: own})
	}
	return c
}

// verbRequest is the context key with which verbOf asks a task verb's
// dispatching command for its verb instead of running it.
type verbRequest struct{}

// verbOf returns the verb behind c when c is the dispatching command of a
// task verb (taskVerb.command: the only commands that skip flag parsing).
func verbOf(c *cli.Command) (taskVerb, bool, error) {
	if !c.SkipFlagParsing {
		return taskVerb{}, false, nil
	}
	var v taskVerb
	ctx := cli.NewContext(&cli.App{}, nil, nil)
	ctx.Context = context.WithValue(context.Background(), verbRequest{}, &v)
	if err := c.Action(ctx); err != nil || v.action == nil {
		return taskVerb{}, false, fmt.Errorf("command %s skips flag parsing but is no task verb (%v)", c.Name, err)
	}
	return v, true, nil
}

// pageMarkdown returns urfave/cli's markdown md as the page shows it: every
// heading one level down (the page's own title is the only first-level
// one), and the '<' of the help texts ("model-v<N>") escaped, which
// markdown would take for HTML; code is left as it is.
func pageMarkdown(md string) string {
	var b bytes.Buffer
	fenced := false
	for _, line := range strings.SplitAfter(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
		case fenced:
		case strings.HasPrefix(line, "#"):
			line = "#" + line
		default:
			line = escapeHTML(line)
		}
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// escapeHTML escapes '<' in line outside inline code spans (`...`), where
// markdown shows text as it is.
func escapeHTML(line string) string {
	parts := strings.Split(line, "`")
	for i := range parts {
		// Even parts are outside spans, and so is the text after a
		// backtick that no other closes (markdown shows it as it is).
		if i%2 == 0 || i == len(parts)-1 {
			parts[i] = strings.ReplaceAll(parts[i], "<", "&lt;")
		}
	}
	return strings.Join(parts, "`")
}

// commandsDocDiff compares page (commandsDoc's text) with the reference
// the command line generates now: "" when they agree, else where the
// first difference is.
func commandsDocDiff(page string) (string, error) {
	head, ref, ok := splitCommandsDoc(page)
	if !ok {
		return fmt.Sprintf("it has no marker line %q", notesMarker), nil
	}
	want, err := commandsReference()
	if err != nil {
		return "", err
	}
	if ref == want {
		return "", nil
	}
	got, exp := strings.Split(ref, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(got) && i < len(exp) && got[i] == exp[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return fmt.Sprintf("%q", ls[i])
		}
		return "the end"
	}
	return fmt.Sprintf("line %d is %s, the command line gives %s", strings.Count(head, "\n")+i+1, line(got), line(exp)), nil
}
