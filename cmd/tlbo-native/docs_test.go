package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsDocCurrent: the committed docs/commands.md holds the
// reference that the command line generates now, so that a flag added,
// renamed or reworded shows in the page (or this test says how to
// regenerateDoc it).
func TestCommandsDocCurrent(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", commandsDoc))
	if err != nil {
		t.Fatal(err)
	}
	diff, err := commandsDocDiff(string(page))
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Fatalf("%s is not what the command line generates: %s.\nRegenerate it from the checkout's root with\n\t%s\n"+
			"(after ./build.sh build; the hand-written part above its marker line is kept) and commit the result",
			commandsDoc, diff, regenerateDoc)
	}
}

// TestCommandsReference: the generated reference covers every verb, each
// task verb with its flags and one section per task that adds options,
// and the markdown escapes what would read as HTML.
func TestCommandsReference(t *testing.T) {
	ref, err := commandsReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, heading := range []string{"### version\n", "### optimize\n", "#### optimize --task molecule\n",
		"#### train --task topology\n", "#### checkpoint import\n", "#### data molecule\n", "#### bench jtvae-step\n",
		"#### molecule tree\n", "#### topology solve\n", "##### analyze gp-loglik --task expression\n"} {
		if !strings.Contains(ref, "\n"+heading) {
			t.Errorf("the reference lacks the heading %q", heading)
		}
	}
	// optimize's own flags, then one a task adds, in the task's section only.
	opt := section(ref, "### optimize\n")
	for _, flag := range []string{"**--budget**", "**--run-dir**", "**--resume**", "**--elbo**"} {
		if !strings.Contains(opt, flag) {
			t.Errorf("optimize's section lacks %s", flag)
		}
	}
	if strings.Contains(opt, "**--molecules**") {
		t.Errorf("optimize's own section lists the molecule task's --molecules")
	}
	if !strings.Contains(section(ref, "#### optimize --task molecule\n"), "**--molecules**") {
		t.Errorf("optimize --task molecule's section lacks --molecules")
	}
	if strings.Contains(ref, "model-v<N>") || !strings.Contains(ref, "model-v&lt;N>") {
		t.Errorf("the reference does not escape optimize's model-v<N>")
	}
	if strings.Contains(ref, "### docs") {
		t.Errorf("the reference lists the hidden docs verb")
	}
}

// section returns the text of ref from heading to the next heading.
func section(ref, heading string) string {
	i := strings.Index(ref, "\n"+heading)
	if i < 0 {
		return ""
	}
	rest := ref[i+1+len(heading):]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestWriteCommandsDoc: the docs verb rewrites the generated part below the
// marker and keeps the hand-written part above it; a page without the
// marker is refused, not overwritten.
func TestWriteCommandsDoc(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "commands.md")
	head := "# Commands\n\nHand-written notes.\n\n" + notesMarker + "\n"
	if err := os.WriteFile(path, []byte(head+"\nstale reference\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runOut("docs", "commands", "--out", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), head) {
		t.Errorf("the hand-written part was not kept:\n%.300s", b)
	}
	if diff, err := commandsDocDiff(string(b)); err != nil || diff != "" {
		t.Errorf("the rewritten page differs from the reference: %s %v", diff, err)
	}

	bare := filepath.Join(dir, "bare.md")
	if err := os.WriteFile(bare, []byte("# Notes only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runOut("docs", "commands", "--out", bare)
	if err == nil || !strings.Contains(err.Error(), "marker") {
		t.Errorf("a page without the marker: error %v, want one naming the marker", err)
	}
	if b, _ := os.ReadFile(bare); string(b) != "# Notes only\n" {
		t.Errorf("a page without the marker was changed to:\n%.300s", b)
	}
}
