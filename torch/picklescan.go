package torch

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Argument layouts of pickle opcodes (protocols 0 to 5).
const (
	argNone  = iota
	argFixed // a fixed number of bytes
	argLen   // a little-endian length of n bytes, then that many bytes
	argLines // n newline-terminated lines
	argFrame // an 8-byte frame length; the frame's opcodes follow inline
)

type opArg struct{ kind, n int }

var pickleOps = func() [256]*opArg {
	var t [256]*opArg
	for _, c := range []byte("(.012NRabd}el]ostu)Q\x81\x85\x86\x87\x88\x89\x8f\x90\x91\x92\x93\x94\x97\x98") {
		t[c] = &opArg{argNone, 0}
	}
	for c, n := range map[byte]int{'K': 1, 'M': 2, 'J': 4, 'G': 8, 'q': 1, 'r': 4, 'h': 1, 'j': 4,
		0x80: 1, 0x82: 1, 0x83: 2, 0x84: 4} {
		t[c] = &opArg{argFixed, n}
	}
	for c, n := range map[byte]int{'T': 4, 'U': 1, 'X': 4, 0x8c: 1, 0x8d: 8, 'B': 4, 'C': 1, 0x8e: 8, 0x96: 8,
		0x8a: 1, 0x8b: 4} {
		t[c] = &opArg{argLen, n}
	}
	for _, c := range []byte("ILFSVPpg") {
		t[c] = &opArg{argLines, 1}
	}
	t['c'], t['i'] = &opArg{argLines, 2}, &opArg{argLines, 2}
	t[0x95] = &opArg{argFrame, 8}
	return t
}()

// scanPickle walks the opcodes of a pickle up to its STOP and checks that
// every opcode is known and every length it declares fits in the data. The
// unpickler allocates what a length says before reading, so without this a
// few forged bytes could ask for gigabytes.
func scanPickle(data []byte) error {
	for pos := 0; pos < len(data); {
		code := data[pos]
		op := pickleOps[code]
		if op == nil {
			return fmt.Errorf("unknown pickle opcode 0x%02x at byte %d", code, pos)
		}
		if code == '.' {
			return nil
		}
		pos++
		rest := len(data) - pos
		switch op.kind {
		case argFixed:
			if op.n > rest {
				return fmt.Errorf("opcode 0x%02x at byte %d: truncated", code, pos-1)
			}
			pos += op.n
		case argLen, argFrame:
			if op.n > rest {
				return fmt.Errorf("opcode 0x%02x at byte %d: truncated length", code, pos-1)
			}
			var buf [8]byte
			copy(buf[:], data[pos:pos+op.n])
			n := binary.LittleEndian.Uint64(buf[:])
			if op.n == 4 && (code == 'T' || code == 0x8b) && int32(n) < 0 { // signed lengths
				return fmt.Errorf("opcode 0x%02x at byte %d: negative length", code, pos-1)
			}
			pos += op.n
			if n > uint64(len(data)-pos) {
				return fmt.Errorf("opcode 0x%02x at byte %d: length %d beyond the %d bytes left", code, pos-1-op.n, n, len(data)-pos)
			}
			if op.kind == argLen {
				pos += int(n)
			}
		case argLines:
			for range op.n {
				nl := bytes.IndexByte(data[pos:], '\n')
				if nl < 0 {
					return fmt.Errorf("opcode 0x%02x at byte %d: unterminated line", code, pos-1)
				}
				pos += nl + 1
			}
		}
	}
	return fmt.Errorf("pickle has no STOP opcode")
}
