// Package pgxuuid teaches a pgx type map to encode and scan github.com/google/uuid's UUID as
// PostgreSQL's uuid directly. Without it pgx reaches a uuid.UUID only through its
// database/sql interfaces: a parameter is turned into its text form, a failed binary encoding
// (with its formatted error) and a parse of that text, and a scan formats the binary value as
// text for uuid.UUID.Scan to parse again. That costs microseconds per value, which adds up to
// milliseconds for the arrays of hundreds or thousands of ids that Scopes, listings and the
// snapshot pass (make bench measured it).
package pgxuuid

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Register makes m encode uuid.UUID values and scan into *uuid.UUID targets through the uuid
// type's binary (or text) representation, also as elements of uuid[] arrays. Everything else
// about uuid and uuid[] stays pgx's: pgtype.UUID, [16]byte-based values, strings and scans
// into any. A NULL scanned into a *uuid.UUID leaves it unchanged, as uuid.UUID.Scan does.
// Call it on every connection's type map (pgxpool.Config.AfterConnect).
func Register(m *pgtype.Map) {
	uuidType := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: Codec{}}
	m.RegisterType(uuidType)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: uuidType}})
}

// Codec is pgtype.UUIDCodec with plans for uuid.UUID values and *uuid.UUID targets.
type Codec struct {
	pgtype.UUIDCodec
}

// PlanEncode implements pgtype.Codec.
func (c Codec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok {
		switch format {
		case pgtype.BinaryFormatCode:
			return encodeBinary{}
		case pgtype.TextFormatCode:
			return encodeText{}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

// PlanScan implements pgtype.Codec.
func (c Codec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if format == pgtype.BinaryFormatCode {
			return scanBinary{}
		}
		var v pgtype.UUID
		if next := c.UUIDCodec.PlanScan(m, oid, format, &v); next != nil {
			return scanThrough{next: next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeBinary struct{}

func (encodeBinary) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID) //nolint:forcetypeassert // the plan is only chosen for uuid.UUID
	return append(buf, u[:]...), nil
}

type encodeText struct{}

func (encodeText) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID) //nolint:forcetypeassert // the plan is only chosen for uuid.UUID
	return append(buf, u.String()...), nil
}

// scanBinary copies the 16 bytes of a binary uuid.
type scanBinary struct{}

func (scanBinary) Scan(src []byte, target any) error {
	if src == nil {
		return nil
	}
	if len(src) != 16 {
		return fmt.Errorf("invalid length for uuid: %v", len(src))
	}
	copy(target.(*uuid.UUID)[:], src) //nolint:forcetypeassert // the plan is only chosen for *uuid.UUID
	return nil
}

// scanThrough scans through pgx's own plan for a *pgtype.UUID and copies a non-NULL value.
type scanThrough struct {
	next pgtype.ScanPlan
}

func (p scanThrough) Scan(src []byte, target any) error {
	var v pgtype.UUID
	if err := p.next.Scan(src, &v); err != nil {
		return err
	}
	if v.Valid {
		*target.(*uuid.UUID) = v.Bytes //nolint:forcetypeassert // the plan is only chosen for *uuid.UUID
	}
	return nil
}
