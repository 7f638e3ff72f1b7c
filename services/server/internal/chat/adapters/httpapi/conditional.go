package httpapi

import (
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/conditional"
)

// validators are the headers of a conditional read's 200 and 304 (spec 05, "Conditional
// reads"): the entity tag of the body (kernel/conditional.Of, the hash of the JSON the 200
// sends) and conditional.CacheControl.
type validators struct {
	etag, cacheControl string
}

// validate computes the validators of body and reports whether ifNoneMatch names its tag,
// so that the handler answers 304 instead of the body.
func validate(body any, ifNoneMatch *apigen.IfNoneMatch) (validators, bool, error) {
	etag, err := conditional.Of(body)
	if err != nil {
		return validators{}, false, err
	}
	return validators{etag: etag, cacheControl: conditional.CacheControl}, conditional.NotModified(ifNoneMatch, etag), nil
}

// notModified is the shared 304 with the validators; every GetX304Response is an alias of it.
func (v validators) notModified() apigen.NotModifiedResponse {
	return apigen.NotModifiedResponse{Headers: apigen.NotModifiedResponseHeaders{ETag: &v.etag, CacheControl: &v.cacheControl}}
}
