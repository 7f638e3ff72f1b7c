package pgxuuid_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/kernel/pgxuuid"
)

// roundTrip encodes v as oid in format with m and scans the bytes back into dst.
func roundTrip(t *testing.T, m *pgtype.Map, oid uint32, format int16, v, dst any) []byte {
	t.Helper()
	buf, err := m.Encode(oid, format, v, nil)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	if err := m.Scan(oid, format, buf, dst); err != nil {
		t.Fatalf("scan %q: %v", buf, err)
	}
	return buf
}

func TestRegisteredMapAgreesWithPgx(t *testing.T) {
	t.Parallel()
	plain := pgtype.NewMap()
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	u := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		var got, want uuid.UUID
		buf := roundTrip(t, m, pgtype.UUIDOID, format, u, &got)
		wantBuf := roundTrip(t, plain, pgtype.UUIDOID, format, u, &want)
		if string(buf) != string(wantBuf) || got != u || want != u {
			t.Fatalf("format %d: %q -> %v, pgx alone %q -> %v", format, buf, got, wantBuf, want)
		}
		var ids, wantIDs []uuid.UUID
		in := []uuid.UUID{u, uuid.Nil, uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000ff")}
		buf = roundTrip(t, m, pgtype.UUIDArrayOID, format, in, &ids)
		wantBuf = roundTrip(t, plain, pgtype.UUIDArrayOID, format, in, &wantIDs)
		if string(buf) != string(wantBuf) || len(ids) != 3 || ids[0] != u || ids[1] != uuid.Nil || ids[2] != in[2] {
			t.Fatalf("format %d: array %q -> %v, pgx alone %q", format, buf, ids, wantBuf)
		}
	}
}

func TestOtherTargetsStayPgxs(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	u := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	var p pgtype.UUID
	roundTrip(t, m, pgtype.UUIDOID, pgtype.BinaryFormatCode, pgtype.UUID{Bytes: u, Valid: true}, &p)
	if !p.Valid || p.Bytes != u {
		t.Fatalf("pgtype.UUID = %v", p)
	}
	var s string
	roundTrip(t, m, pgtype.UUIDOID, pgtype.TextFormatCode, u.String(), &s)
	if s != u.String() {
		t.Fatalf("string = %q", s)
	}
	var a any
	roundTrip(t, m, pgtype.UUIDOID, pgtype.BinaryFormatCode, u, &a)
	if b, ok := a.([16]byte); !ok || b != u {
		t.Fatalf("any = %#v", a)
	}
}

func TestNullLeavesTheTargetAlone(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	u := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	got := u
	if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, nil, &got); err != nil || got != u {
		t.Fatalf("NULL into a uuid.UUID: %v, %v (uuid.UUID.Scan leaves it)", got, err)
	}
	var p pgtype.UUID
	if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, nil, &p); err != nil || p.Valid {
		t.Fatalf("NULL into a pgtype.UUID: %v, %v", p, err)
	}
}

func BenchmarkEncodeArray(b *testing.B) {
	ids := make([]uuid.UUID, 1000)
	for i := range ids {
		ids[i] = uuid.New()
	}
	for _, tc := range []struct {
		name     string
		register bool
	}{{"pgx", false}, {"registered", true}} {
		b.Run(tc.name, func(b *testing.B) {
			m := pgtype.NewMap()
			if tc.register {
				pgxuuid.Register(m)
			}
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, ids, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestBadBinaryLength(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	var got uuid.UUID
	if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, []byte{1, 2, 3}, &got); err == nil {
		t.Fatalf("3 bytes scanned into a uuid: %v", got)
	}
}

func BenchmarkScan(b *testing.B) {
	u := uuid.New()
	for _, tc := range []struct {
		name     string
		register bool
	}{{"pgx", false}, {"registered", true}} {
		b.Run(tc.name, func(b *testing.B) {
			m := pgtype.NewMap()
			if tc.register {
				pgxuuid.Register(m)
			}
			var got uuid.UUID
			for b.Loop() {
				if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, u[:], &got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
