// Package zipcrc reads the entries of zip archives (.npz arrays, .pt
// checkpoints) checking each one's length and CRC-32 against the archive's
// central directory, stored and deflated entries alike.
//
// archive/zip checks an entry's CRC-32 only when its reader is read to EOF
// and the directory's CRC-32 is not zero; readers of arrays and tensor
// storages stop at the last byte they need, so a corrupt entry went
// unnoticed. Here the caller reads what it needs and then calls Verify,
// which reads the rest of the entry and checks it.
package zipcrc

import (
	"archive/zip"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
)

// Error reports an entry whose data does not match the archive's directory:
// its CRC-32 or length differ (Err is zip.ErrChecksum or zip.ErrFormat), or
// its data cannot be read or decompressed (Err is the cause).
type Error struct {
	Entry  string // the entry's name in the archive
	Detail string // what is wrong
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("entry %q: %s", e.Entry, e.Detail) }

// Unwrap returns the cause, for errors.Is(err, zip.ErrChecksum) and the like.
func (e *Error) Unwrap() error { return e.Err }

// Reader reads the uncompressed data of one entry, at most the length the
// directory gives, computing its CRC-32 as it goes.
type Reader struct {
	f    *zip.File
	src  io.Reader
	dec  io.ReadCloser // the decompressor of a deflated entry, else nil
	crc  uint32
	n    uint64  // bytes read so far
	err  error   // sticky: io.EOF once the entry checked out
	tail [1]byte // finish probes it for data beyond the directory's length
}

// Open returns a reader of f's uncompressed data. Only stored and deflated
// entries are supported (as by archive/zip without registered decompressors).
func Open(f *zip.File) (*Reader, error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, &Error{Entry: f.Name, Detail: err.Error(), Err: err}
	}
	r := &Reader{f: f, src: raw}
	switch f.Method {
	case zip.Store:
		if f.CompressedSize64 != f.UncompressedSize64 {
			return nil, &Error{Entry: f.Name, Err: zip.ErrFormat, Detail: fmt.Sprintf(
				"stored with %d bytes of data for %d bytes", f.CompressedSize64, f.UncompressedSize64)}
		}
	case zip.Deflate:
		r.dec = flate.NewReader(raw)
		r.src = r.dec
	default:
		return nil, &Error{Entry: f.Name, Err: zip.ErrAlgorithm,
			Detail: fmt.Sprintf("compression method %d is not supported (stored or deflated only)", f.Method)}
	}
	return r, nil
}

// Read reads the entry's data. At its end it returns io.EOF if the data's
// length and CRC-32 match the directory, else an *Error.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	left := r.f.UncompressedSize64 - r.n
	if left == 0 {
		r.err = r.finish()
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if uint64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.src.Read(p)
	r.crc = crc32.Update(r.crc, crc32.IEEETable, p[:n])
	r.n += uint64(n)
	switch {
	case err == io.EOF:
		r.err = r.finish()
	case err != nil:
		r.err = r.corrupt(err, "reading its data: %v", err)
	}
	return n, r.err
}

// finish checks, once the directory's length has been read or the data
// ended, that the data ends there and that its CRC-32 matches.
func (r *Reader) finish() error {
	size := r.f.UncompressedSize64
	if r.n < size {
		return r.corrupt(zip.ErrFormat, "its data ends after %d bytes, the directory says %d", r.n, size)
	}
	switch k, err := io.ReadFull(r.src, r.tail[:]); {
	case k > 0:
		return r.corrupt(zip.ErrFormat, "its data goes on after the %d bytes the directory says", size)
	case err != io.EOF:
		return r.corrupt(err, "reading its data: %v", err)
	}
	if r.crc != r.f.CRC32 {
		return r.corrupt(zip.ErrChecksum, "CRC-32 mismatch (stored 0x%08x, computed 0x%08x)", r.f.CRC32, r.crc)
	}
	return io.EOF
}

func (r *Reader) corrupt(err error, format string, args ...any) error {
	return &Error{Entry: r.f.Name, Detail: fmt.Sprintf(format, args...), Err: err}
}

// Verify reads what the caller left of the entry and checks its length and
// CRC-32 against the directory: nil if they match, else an *Error. Call it
// after reading what is needed, before using it.
func (r *Reader) Verify() error {
	_, err := io.Copy(io.Discard, r)
	return err
}

// Close releases the decompressor; it does not verify.
func (r *Reader) Close() error {
	if r.dec != nil {
		return r.dec.Close()
	}
	return nil
}

// ReadAll reads and verifies the whole of an entry of at most limit bytes.
func ReadAll(f *zip.File, limit int64) ([]byte, error) {
	if limit < 0 || f.UncompressedSize64 > uint64(limit) {
		return nil, &Error{Entry: f.Name, Err: zip.ErrFormat,
			Detail: fmt.Sprintf("%d bytes, at most %d", f.UncompressedSize64, limit)}
	}
	r, err := Open(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r) // grows with the data read, not the size the directory claims
	if err != nil {
		return nil, err
	}
	return data, nil
}
