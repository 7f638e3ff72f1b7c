package ingesttest

import (
	"strconv"

	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
)

// Masker returns the masker a default configuration builds (the defaults of
// ingest.mask_min_token_length and ingest.mask_min_entropy_millibits), so the tests of the
// masking rules test what a default deployment runs. It panics on a default that does not
// parse or that NewMasker refuses, which a test of the keys would also catch.
func Masker() domain.Masker {
	minLen, err := strconv.Atoi(app.KeyMaskMinTokenLength.Default)
	if err != nil {
		panic(err)
	}
	minEntropy, err := strconv.Atoi(app.KeyMaskMinEntropy.Default)
	if err != nil {
		panic(err)
	}
	m, err := domain.NewMasker(minLen, minEntropy)
	if err != nil {
		panic(err)
	}
	return m
}
