// Package eventtest builds valid durable events of any registered type for tests and
// benchmarks, so that code appending or reading events need not spell out each type's payload
// and placement rules.
package eventtest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/sync/domain"
)

// sampleTime is the value of every time field of a sample payload.
var sampleTime = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// Event returns a valid event of type typ (domain.Validate accepts it): fresh UUIDv7 ids for
// the actor and everything the type's resource needs (space, channel, thread, audience), and a
// payload, as a json.RawMessage, with every registered field filled and the ids in it
// consistent with the event's own. It panics for an unregistered type, a test's mistake.
func Event(typ string) kernel.Event {
	t, ok := domain.Lookup(typ)
	if !ok {
		panic(fmt.Sprintf("eventtest: unregistered event type %q", typ))
	}
	e := kernel.Event{
		Type:         typ,
		ActorID:      ids.New(),
		ResourceKind: t.Resource,
		ResourceID:   ids.New(),
	}
	space, channel, thread := ids.New(), ids.New(), ids.New()
	switch t.Resource {
	case kernel.ResourceSpace:
		e.SpaceID = e.ResourceID
	case kernel.ResourceChannel:
		e.SpaceID, e.ChannelID = space, e.ResourceID
	case kernel.ResourceThread:
		e.SpaceID, e.ChannelID, e.ThreadID = space, channel, e.ResourceID
	case kernel.ResourceMessage:
		e.SpaceID, e.ChannelID, e.ThreadID = space, channel, thread
	}
	if t.Personal {
		e.AudienceID = ids.New()
		if t.Resource == kernel.ResourcePrincipal {
			e.ResourceID = e.AudienceID
		}
	}
	payload := map[string]any{}
	for _, f := range t.Fields() {
		payload[f.Name] = sample(e, f)
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("eventtest: encode payload: %v", err))
	}
	e.Payload = json.RawMessage(raw)
	return e
}

// sample returns a value of f's kind, taking ids from e where the field names one of them.
func sample(e kernel.Event, f domain.Field) any {
	switch f.Kind {
	case domain.KindID:
		return sampleID(e, f.Name)
	case domain.KindIDs:
		return []uuid.UUID{ids.New()}
	case domain.KindString:
		switch f.Name {
		case "kind":
			return "standard"
		case "role":
			return "member"
		case "resource_kind":
			return string(kernel.ResourceChannel)
		}
		return "sample " + f.Name
	case domain.KindInt:
		return 1
	case domain.KindBool:
		return true
	case domain.KindTime:
		return sampleTime
	case domain.KindObject:
		return map[string]any{}
	case domain.KindList:
		return []any{}
	case domain.KindStrings:
		return []string{"sample"}
	}
	return "sample value" // domain.KindValue
}

func sampleID(e kernel.Event, name string) uuid.UUID {
	byName := map[string]uuid.UUID{
		"space_id":   e.SpaceID,
		"channel_id": e.ChannelID,
		"thread_id":  e.ThreadID,
		"author_id":  e.ActorID,
		"created_by": e.ActorID,
	}
	if id := byName[name]; id != uuid.Nil {
		return id
	}
	if name == "principal_id" && e.AudienceID != uuid.Nil {
		return e.AudienceID
	}
	if name == string(e.ResourceKind)+"_id" {
		return e.ResourceID
	}
	return ids.New()
}
