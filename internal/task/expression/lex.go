package expression

import (
	"fmt"
	"strings"
)

type tokenKind int

const (
	tokNumber tokenKind = iota // decimal literal: 3, 0.5, .5, 1e-3
	tokIdent                   // x, sin, exp
	tokOp                      // one of + - * / ( )
)

// token is one lexeme; pos is its byte offset in the text, for error messages.
type token struct {
	kind tokenKind
	text string
	pos  int
}

// lex splits text into tokens; spaces are optional between tokens.
func lex(text string) ([]token, error) {
	var toks []token
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.IndexByte("+-*/()", c) >= 0:
			toks = append(toks, token{tokOp, text[i : i+1], i})
			i++
		case isDigit(c) || c == '.':
			j := scanNumber(text, i)
			if j == i {
				return nil, fmt.Errorf("malformed number at offset %d", i)
			}
			toks = append(toks, token{tokNumber, text[i:j], i})
			i = j
		case isLetter(c):
			j := i
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			toks = append(toks, token{tokIdent, text[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q at offset %d", c, i)
		}
	}
	return toks, nil
}

// scanNumber returns the end of the decimal literal starting at i (i itself if none):
// digits, an optional fraction and an optional exponent.
func scanNumber(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	digits := j - i
	if j < len(s) && s[j] == '.' {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		digits += k - j - 1
		j = k
	}
	if digits == 0 {
		return i
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	return j
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
