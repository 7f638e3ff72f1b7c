package httpmw

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
)

// A single write of at least parallelMin bytes is compressed in pieces of at least pieceMin
// bytes at once, one per processor up to maxPieces: a snapshot's body (about 600 KiB) then
// costs its client about half the time of compressing it on one processor when the other is
// free, and a piece that large loses almost nothing of the ratio to its empty window.
const (
	parallelMin = 128 << 10
	pieceMin    = 64 << 10
	maxPieces   = 4
)

// gzipHeader is the ten bytes that begin every answer's gzip member (RFC 1952): deflate, no
// flags, no modification time, XFL 4 (fastest), OS unknown.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

// gzipStream writes one gzip member whose deflate stream comes from klauspost's flate at
// gzipLevel. Small writes go through one sequential compressor, as compress/gzip would; a
// large write is cut into pieces compressed concurrently, each by a fresh compressor ending in
// a sync flush (a byte-aligned, non-final block), and the pieces are written in order, as pigz
// does: the concatenation is one valid deflate stream, since no piece refers back beyond its
// own start. Before such a write the sequential compressor is flushed and forgets its window,
// so nothing after it refers back into the pieces either. The CRC-32 and the size cover every
// byte written.
type gzipStream struct {
	w      io.Writer
	fw     *flate.Writer // the sequential compressor
	dirty  bool          // fw has taken input since it was last reset
	header bool          // gzipHeader is written
	crc    uint32
	size   uint32
}

// newGzipStream returns a stream that writes to io.Discard until Reset.
func newGzipStream() *gzipStream {
	fw, _ := flate.NewWriter(io.Discard, gzipLevel) // a valid constant level cannot fail
	return &gzipStream{w: io.Discard, fw: fw}
}

// Reset starts a new member written to w.
func (z *gzipStream) Reset(w io.Writer) {
	z.w, z.dirty, z.header, z.crc, z.size = w, false, false, 0, 0
	z.fw.Reset(w)
}

func (z *gzipStream) writeHeader() error {
	if z.header {
		return nil
	}
	z.header = true
	_, err := z.w.Write(gzipHeader)
	return err
}

// Write compresses p into the member.
func (z *gzipStream) Write(p []byte) (int, error) {
	if err := z.writeHeader(); err != nil {
		return 0, err
	}
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.size += uint32(len(p)) //nolint:gosec // G115: ISIZE is the size modulo 2^32 (RFC 1952)
	n := pieces(len(p))
	if n < 2 {
		z.dirty = true
		return z.fw.Write(p)
	}
	if z.dirty {
		if err := z.fw.Flush(); err != nil {
			return 0, err
		}
		z.fw.Reset(z.w)
		z.dirty = false
	}
	if err := compressPieces(z.w, p, n); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush sends what was written so far (RFC 1951's sync flush).
func (z *gzipStream) Flush() error {
	if err := z.writeHeader(); err != nil {
		return err
	}
	return z.fw.Flush()
}

// Close ends the deflate stream with a final block and writes the trailer.
func (z *gzipStream) Close() error {
	if err := z.writeHeader(); err != nil {
		return err
	}
	if err := z.fw.Close(); err != nil {
		return err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], z.crc)
	binary.LittleEndian.PutUint32(trailer[4:], z.size)
	_, err := z.w.Write(trailer[:])
	return err
}

// pieces is how many pieces a write of size bytes is compressed in: 1 below parallelMin or
// with one processor.
func pieces(size int) int {
	if size < parallelMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), size/pieceMin, maxPieces))
}

// compressPieces compresses p in n pieces at once, each ending in a sync flush, and writes
// them to w in order.
func compressPieces(w io.Writer, p []byte, n int) error {
	bufs := make([]*bytes.Buffer, n)
	errs := make([]error, n)
	size := len(p) / n
	var wg sync.WaitGroup
	for i := range n {
		piece := p[i*size:]
		if i < n-1 {
			piece = piece[:size]
		}
		bufs[i] = getPieceBuffer()
		if i == 0 {
			continue
		}
		wg.Go(func() { errs[i] = compressPiece(bufs[i], piece) })
	}
	errs[0] = compressPiece(bufs[0], p[:size])
	wg.Wait()
	var err error
	for i, b := range bufs {
		if err == nil {
			err = errs[i]
		}
		if err == nil {
			_, err = w.Write(b.Bytes())
		}
		putPieceBuffer(b)
	}
	return err
}

// compressPiece writes piece compressed into dst, ending in a sync flush.
func compressPiece(dst *bytes.Buffer, piece []byte) error {
	fw := getPieceWriter(dst)
	defer putPieceWriter(fw)
	if _, err := fw.Write(piece); err != nil {
		return err
	}
	return fw.Flush()
}

// pieceWriters and pieceBuffers keep idle compressors and output buffers of pieces, bounded
// like gzipWriters and for the same reason.
var (
	pieceWriters = make(chan *flate.Writer, spareWriters)
	pieceBuffers = make(chan *bytes.Buffer, spareWriters)
)

func getPieceWriter(dst io.Writer) *flate.Writer {
	select {
	case fw := <-pieceWriters:
		fw.Reset(dst)
		return fw
	default:
		fw, _ := flate.NewWriter(dst, gzipLevel) // a valid constant level cannot fail
		return fw
	}
}

func putPieceWriter(fw *flate.Writer) {
	fw.Reset(io.Discard)
	select {
	case pieceWriters <- fw:
	default:
	}
}

func getPieceBuffer() *bytes.Buffer {
	select {
	case b := <-pieceBuffers:
		return b
	default:
		return new(bytes.Buffer)
	}
}

// putPieceBuffer keeps b for reuse unless it grew beyond a megabyte or spareWriters are idle.
func putPieceBuffer(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return
	}
	b.Reset()
	select {
	case pieceBuffers <- b:
	default:
	}
}
