package external

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"python3 score.py", []string{"python3", "score.py"}},
		{"  a\tb\n c  ", []string{"a", "b", "c"}},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}},
		{`a 'it''s' x`, []string{"a", "its", "x"}},
		{`a "it's" 'say "hi"'`, []string{"a", "it's", `say "hi"`}},
		{`a b\ c \"q\" \\ \#x`, []string{"a", "b c", `"q"`, `\`, "#x"}},
		{`a "x\"y\\z\$w\n"`, []string{"a", `x"y\z$w\n`}},
		{`a 'x\y$z'`, []string{"a", `x\y$z`}},
		{`a '' ""`, []string{"a", "", ""}},
		{"a b\\\nc", []string{"a", "bc"}},
		{`a x#y é*[?]~`, []string{"a", "x#y", "é*[?]~"}},
		{`a 'f(x) | g > h; $HOME &'`, []string{"a", "f(x) | g > h; $HOME &"}},
		{`"my program" --flag=a" b"'c'`, []string{"my program", "--flag=a bc"}},
	} {
		got, err := SplitCommand(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{`a 'b`, "unterminated single quote"},
		{`a "b`, "unterminated double quote"},
		{`a "b\"`, "unterminated double quote"},
		{`a b\`, "trailing backslash"},
		{"", "no program"},
		{"   ", "no program"},
		{"a | b", "shell syntax"},
		{"a > out", "shell syntax"},
		{"a; b", "shell syntax"},
		{"a $HOME", "shell syntax"},
		{"a `b`", "shell syntax"},
		{"a (b)", "shell syntax"},
		{"a &", "shell syntax"},
		{"a #comment", "shell syntax"},
		{`a "$HOME"`, "would be expanded"},
	} {
		got, err := SplitCommand(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("SplitCommand(%q) = %q, %v; want an error with %q", c.in, got, err, c.msg)
		}
	}
}

// TestShellQuote checks that shellQuote's words read back as themselves.
func TestShellQuote(t *testing.T) {
	words := []string{"plain", "", "it's", `a "b" \c $d`, "x y\nz", "é#%()[]"}
	var line []string
	for _, w := range words {
		line = append(line, shellQuote(w))
	}
	got, err := SplitCommand(strings.Join(line, " "))
	if err != nil || !slices.Equal(got, words) {
		t.Fatalf("SplitCommand(quoted) = %q, %v; want %q", got, err, words)
	}
}
