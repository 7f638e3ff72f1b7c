package app

import (
	"errors"
	"fmt"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel/config"
)

// Configuration keys of the ingester; wire reads them with LimitsFrom.
var (
	// KeyMaxBodyBytes bounds the body text of one record in its message, so that an ordinary
	// long pull request fits chat.max_message_bytes with its header, file list and references.
	KeyMaxBodyBytes = config.Define("ingest.max_body_bytes", config.KindBytes, "8000",
		"most bytes of a pull request's, issue's or commit's body the ingester writes into its message; a longer body is cut and marked [truncated] (at least 1; keep it well below chat.max_message_bytes)")
	// KeyMaxListedFiles bounds the file names a commit's message lists; the rest are counted.
	KeyMaxListedFiles = config.Define("ingest.max_listed_files", config.KindInt, "20",
		"most touched files a commit's message lists by name; the others are counted as \"and N more\" (at least 1)")
	// KeyGHPageSize is how many pull requests or issues one gh call asks for. GitHub's search
	// returns at most domain.GHSearchMax per query, so only smaller values make sense: fewer
	// per call means more calls but smaller answers to hold.
	// KeyMaskMinTokenLength is the shortest run of token characters the masker's entropy rule
	// looks at: shorter runs are words and identifiers far more often than secrets.
	KeyMaskMinTokenLength = config.Define("ingest.mask_min_token_length", config.KindInt, "32",
		"shortest run of token characters (letters, digits, + / = _ -) the ingester's masker tests for high entropy; shorter runs are never masked by that rule (at least 1)")
	// KeyMaskMinEntropy is the entropy, in thousandths of a bit per character, from which a
	// long run that mixes upper case, lower case and digits counts as a secret: random base62
	// keys score well above CamelCase identifiers and words of the same length. An integer
	// because configuration has no fractional kind.
	KeyMaskMinEntropy = config.Define("ingest.mask_min_entropy_millibits", config.KindInt, "4200",
		"Shannon entropy, in thousandths of a bit per character, from which the ingester's masker treats a long run mixing upper case, lower case and digits as a secret (0 to 8000; lower masks more)")
	KeyGHPageSize = config.Define("ingest.gh_page_size", config.KindInt, "1000",
		"most pull requests or issues one gh call of bothy ingest git asks for; a pass pages on by update time (1 to 1000, the most GitHub's search returns per query)")
)

// GHPageSizeFrom reads ingest.gh_page_size from cfg; parse errors are collected in cfg.
func GHPageSizeFrom(cfg *config.Config) int {
	return cfg.Int(KeyGHPageSize)
}

// CheckGHPageSize refuses a page size below 1 or above what GitHub's search returns.
func CheckGHPageSize(n int) error {
	if n < 1 || n > domain.GHSearchMax {
		return fmt.Errorf("ingest: %s is %d, want 1 to %d", KeyGHPageSize.Name, n, domain.GHSearchMax)
	}
	return nil
}

// LimitsFrom reads the ingester's keys from cfg and takes the title limit from chat's title
// rule (titleRunes); parse errors are collected in cfg (config.Config.Err) like those of
// every other key, and a masker threshold out of range is its error.
func LimitsFrom(cfg *config.Config, titleRunes int) (domain.Limits, error) {
	mask, err := domain.NewMasker(cfg.Int(KeyMaskMinTokenLength), cfg.Int(KeyMaskMinEntropy))
	switch {
	case errors.Is(err, domain.ErrMaskerLength):
		return domain.Limits{}, fmt.Errorf("ingest: %s: %w", KeyMaskMinTokenLength.Name, err)
	case err != nil:
		return domain.Limits{}, fmt.Errorf("ingest: %s: %w", KeyMaskMinEntropy.Name, err)
	}
	return domain.Limits{
		TitleRunes: titleRunes,
		BodyBytes:  int(min(cfg.Bytes(KeyMaxBodyBytes), int64(1<<31-1))),
		Files:      cfg.Int(KeyMaxListedFiles),
		Mask:       mask,
	}, nil
}

// CheckLimits refuses a limit below 1, which would leave every title, body or file list empty.
func CheckLimits(l domain.Limits) error {
	switch {
	case l.TitleRunes < 1:
		return fmt.Errorf("ingest: the title limit is %d, want at least 1", l.TitleRunes)
	case l.BodyBytes < 1:
		return fmt.Errorf("ingest: %s is %d, want at least 1", KeyMaxBodyBytes.Name, l.BodyBytes)
	case l.Files < 1:
		return fmt.Errorf("ingest: %s is %d, want at least 1", KeyMaxListedFiles.Name, l.Files)
	}
	return nil
}
