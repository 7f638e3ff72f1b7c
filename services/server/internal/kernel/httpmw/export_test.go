package httpmw

// Pieces is pieces: how many pieces a single write of size bytes is compressed in.
func Pieces(size int) int { return pieces(size) }
