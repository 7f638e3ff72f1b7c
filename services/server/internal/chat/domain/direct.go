package domain

import (
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
)

// DirectParticipants returns the canonical participant set of a direct message the actor
// opens with ids: the distinct ids plus the actor, sorted (byte order, as PostgreSQL orders
// uuid), so that the same people always make the same set. A validation error names
// participant_ids for an empty list, a nil id, a set of the actor alone, and a set of more
// than maxParticipants (chat.max_dm_participants).
func DirectParticipants(actorID uuid.UUID, ids []uuid.UUID, maxParticipants int) ([]uuid.UUID, error) {
	invalid := func(msg string) error {
		return problem.Validation(problem.FieldError{Field: "participant_ids", Message: msg})
	}
	if len(ids) == 0 {
		return nil, invalid("must name at least one other participant")
	}
	set := make([]uuid.UUID, 0, len(ids)+1)
	set = append(set, actorID)
	for _, id := range ids {
		if id == uuid.Nil {
			return nil, invalid("must not contain the nil id")
		}
		set = append(set, id)
	}
	slices.SortFunc(set, compareIDs)
	set = slices.Compact(set)
	switch {
	case len(set) < 2:
		return nil, invalid("must name at least one participant besides the actor")
	case len(set) > maxParticipants:
		return nil, invalid("must make at most " + strconv.Itoa(maxParticipants) + " participants with the actor")
	}
	return set, nil
}

// DirectKey is the canonical key of a participant set from DirectParticipants: the ids in
// their order joined by commas. The store keeps it unique, so one set has one direct message.
func DirectKey(participants []uuid.UUID) string {
	parts := make([]string, len(participants))
	for i, id := range participants {
		parts[i] = id.String()
	}
	return strings.Join(parts, ",")
}

// SortIDs sorts ids in byte order (PostgreSQL's uuid order) in place and drops duplicates,
// returning the result.
func SortIDs(ids []uuid.UUID) []uuid.UUID {
	slices.SortFunc(ids, compareIDs)
	return slices.Compact(ids)
}

func compareIDs(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }
