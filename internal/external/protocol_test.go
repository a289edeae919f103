package external

import (
	"encoding/json"
	"testing"
)

func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		line  string
		ok    bool
		id    string
		score float64
		kind  string
	}{
		{`{"id": 7, "score": 0.5}`, true, "7", 0.5, ""},
		{`{"score": -2e3, "id": "7"}`, true, "7", -2000, ""},
		{` {"id": 7.0, "score": 1} `, true, "7", 1, ""},
		{`{"id": 7, "score": 1, "extra": [1, 2]}`, true, "7", 1, ""},
		{`{"id": 7, "error": "bad molecule"}`, true, "7", 0, FailError},
		{`{"id": 7, "error": {"code": 3}}`, true, "7", 0, FailError},
		{`{"id": 7, "error": null, "score": 2}`, true, "7", 2, ""},
		{`{"id": 7, "score": NaN}`, true, "7", 0, FailNaN},
		{`{"id": 7, "score": -Infinity}`, true, "7", 0, FailNaN},
		{`{"id": 7, "score": 1e999}`, true, "7", 0, FailNaN},
		{`{"id": 7, "score": "NaN"}`, true, "7", 0, FailNaN},
		{`{"id": 7, "score": "1.5"}`, true, "7", 0, FailNotANumber},
		{`{"id": 7, "score": null}`, true, "7", 0, FailNotANumber},
		{`{"id": 7, "score": true}`, true, "7", 0, FailNotANumber},
		{`{"id": 7}`, true, "7", 0, FailNotANumber},
		{`{"id": 7, "score": 1, "note": "NaN inside a string stays"}`, true, "7", 1, ""},
		{`loading...`, false, "", 0, ""},
		{``, false, "", 0, ""},
		{`{"score": 1}`, false, "", 0, ""},
		{`{"id": [1], "score": 1}`, false, "", 0, ""},
		{`{"id": 7, "score": 1`, false, "", 0, ""},
		{`[1, 2]`, false, "", 0, ""},
	} {
		r, ok := parseReply([]byte(c.line))
		if ok != c.ok {
			t.Errorf("parseReply(%s): ok %v, want %v", c.line, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		kind := ""
		if r.failed != nil {
			kind = r.failed.Kind
		}
		if r.id != c.id || kind != c.kind || (kind == "" && r.score != c.score) {
			t.Errorf("parseReply(%s) = id %q score %v failure %v; want id %q score %v kind %q", c.line, r.id, r.score, r.failed, c.id, c.score, c.kind)
		}
	}
}

// TestEncodeRequest checks that objects are written as they are (no HTML
// escaping, UTF-8 kept) and read back intact by a JSON decoder.
func TestEncodeRequest(t *testing.T) {
	obj := "C#C\\[N+](=O)%12<&>\"é\n\x01"
	line := encodeRequest(3, obj)
	want := `{"id":3,"object":"C#C\\[N+](=O)%12<&>\"é\n\u0001"}` + "\n"
	if string(line) != want {
		t.Errorf("encodeRequest = %s, want %s", line, want)
	}
	var back request
	if err := json.Unmarshal(line, &back); err != nil || back.Object != obj || back.ID != 3 {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
