package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks: every relative link of the README, pretrained/README.md
// and the pages under docs/ names a file or directory of the checkout, and
// a link's #fragment into a markdown page names one of its headings (as
// GitHub makes their anchors), so that a page renamed or a heading
// reworded shows here instead of as a dead link.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md", "pretrained/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		for _, problem := range brokenLinks(t, root, page) {
			t.Errorf("%s: %s", page, problem)
		}
	}
}

// mdLink matches a markdown link or image's target: ](target) or
// ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// brokenLinks returns what is wrong with the relative links of the page
// (a path relative to root).
func brokenLinks(t *testing.T, root, page string) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, target := range linkTargets(string(text)) {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, fragment, _ := strings.Cut(target, "#")
		dest := page
		if file != "" {
			dest = path.Join(path.Dir(page), file)
		}
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			problems = append(problems, fmt.Sprintf("link %s: %s does not exist", target, dest))
			continue
		}
		if fragment == "" || !strings.HasSuffix(dest, ".md") {
			continue
		}
		anchors, err := headingAnchors(filepath.Join(root, dest))
		if err != nil {
			t.Fatal(err)
		}
		if !anchors[fragment] {
			problems = append(problems, fmt.Sprintf("link %s: %s has no heading with the anchor #%s", target, dest, fragment))
		}
	}
	return problems
}

// linkTargets returns the link targets of markdown text outside fenced
// code blocks and code spans.
func linkTargets(text string) []string {
	var targets []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// withoutCodeSpans blanks the `code spans` of a line.
func withoutCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown file: lower case, punctuation dropped but hyphens and
// underscores, blanks made hyphens, and -1, -2, ... after a repeat.
func headingAnchors(file string) (map[string]bool, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		heading, ok := strings.CutPrefix(line, "#")
		if fenced || !ok {
			continue
		}
		heading = strings.TrimSpace(strings.TrimLeft(heading, "#"))
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, heading)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors, nil
}
