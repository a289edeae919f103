package external

import (
	"fmt"
	"strings"
)

// SplitCommand splits a command line into its program and arguments as a
// POSIX shell splits words, without a shell: blanks (space, tab, newline)
// separate words; inside single quotes every character stands for itself;
// inside double quotes a backslash escapes only $, `, ", \ and a newline;
// outside quotes a backslash escapes any character (a backslash-newline is
// removed); a pair of quotes with nothing between makes an empty word.
// Nothing is expanded: no variables, globs, tildes or command substitution.
//
// Characters that a shell would read as syntax rather than text (| & ; < >
// ( ) $ ` outside quotes, and # starting a word) are refused with an error
// instead of being passed on literally, since a command line that relies on
// a shell would otherwise run differently than its author meant: wrap such
// a command in sh -c '...', or quote the characters. An unterminated quote
// or a trailing backslash is an error too.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("command %q: unterminated single quote at character %d", s, i+1)
			}
			cur.WriteString(string(rs[i+1 : j]))
			inWord, i = true, j
		case c == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					switch rs[j+1] {
					case '$', '`', '"', '\\':
						j++
						cur.WriteRune(rs[j])
						continue
					case '\n':
						j++
						continue
					}
				}
				if rs[j] == '$' || rs[j] == '`' {
					return nil, fmt.Errorf("command %q: %q inside double quotes at character %d would be expanded by a shell, "+
						"which is not used here: escape it (\\%c) or use single quotes", s, rs[j], j+1, rs[j])
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("command %q: unterminated double quote at character %d", s, i+1)
			}
			inWord, i = true, j
		case c == '\\':
			if i+1 == len(rs) {
				return nil, fmt.Errorf("command %q: trailing backslash", s)
			}
			i++
			if rs[i] != '\n' {
				cur.WriteRune(rs[i])
				inWord = true
			}
		case strings.ContainsRune("|&;<>()$`", c) || (c == '#' && !inWord):
			return nil, fmt.Errorf("command %q: %q at character %d is shell syntax, and the command is not run by a shell: "+
				"quote it, or run a shell explicitly (sh -c '...')", s, c, i+1)
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("command %q: no program named", s)
	}
	return words, nil
}

// shellQuote returns s as one single-quoted shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
