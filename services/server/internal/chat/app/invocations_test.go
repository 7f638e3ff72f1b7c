package app_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel/problem"
)

// fakeInvocations records what a post hands the invocations port and answers as told.
type fakeInvocations struct {
	mu        sync.Mutex
	invoked   []app.InvokingPost
	answered  []app.InvocationAnswer
	answerID  uuid.UUID
	answerErr error
}

func (f *fakeInvocations) Answer(_ context.Context, a app.InvocationAnswer) (uuid.UUID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answerErr != nil {
		return uuid.Nil, f.answerErr
	}
	f.answered = append(f.answered, a)
	return f.answerID, nil
}

func (f *fakeInvocations) Invoke(_ context.Context, p app.InvokingPost) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.invoked = append(f.invoked, p)
	return nil
}

// withInvocations replaces the env's Service by one with the invocations port inv.
func (e *env) withInvocations(t *testing.T, inv app.Invocations) {
	t.Helper()
	svc, err := app.New(app.Deps{
		Store: e.store, Tx: e.tx, Appender: e.appender, Redactor: e.redactor, Authorizer: e.authz,
		Grants: e.grants, Principals: e.dir, OwnReads: e.ownReads, Readers: e.readers, Clock: e.clock, Config: testConfig,
		Invocations: inv,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.svc = svc
}

// TestPostHandsInvocationsTheirPart: a post hands the port its message, mentions and (in a
// direct message) participants in its transaction; a reply with an invocation token is
// answered first and carries the invocation's id into message.created; an answer refused
// stores nothing; without the port a token is a validation error naming it.
func TestPostHandsInvocationsTheirPart(t *testing.T) {
	t.Parallel()
	invocation := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000f1")
	tests := []struct {
		name      string
		dm        bool
		token     string
		answerErr error
		noPort    bool
		wantErr   error
		check     func(t *testing.T, f *fakeInvocations, m chat.Message, e *env)
	}{
		{name: "a mention in a channel", check: func(t *testing.T, f *fakeInvocations, m chat.Message, _ *env) {
			if len(f.invoked) != 1 || f.invoked[0].MessageID != m.ID || len(f.invoked[0].ParticipantIDs) != 0 ||
				!slices.Contains(f.invoked[0].MentionIDs, robin) {
				t.Fatalf("invoked %+v, want the message with its mention of Robin and no participants", f.invoked)
			}
		}},
		{name: "a direct message", dm: true, check: func(t *testing.T, f *fakeInvocations, _ chat.Message, _ *env) {
			if len(f.invoked) != 1 || !slices.Contains(f.invoked[0].ParticipantIDs, robin) || f.invoked[0].SpaceID != uuid.Nil {
				t.Fatalf("invoked %+v, want the direct message's participants", f.invoked)
			}
		}},
		{name: "a reply with a token", token: "tok", check: func(t *testing.T, f *fakeInvocations, m chat.Message, e *env) {
			if len(f.answered) != 1 || f.answered[0] != (app.InvocationAnswer{Token: "tok", MessageID: m.ID, ThreadID: m.ThreadID}) {
				t.Fatalf("answered %+v, want the reply's token, id and thread", f.answered)
			}
			if m.InvocationID != invocation {
				t.Fatalf("the reply's invocation = %v, want %v", m.InvocationID, invocation)
			}
			evs := e.appender.events()
			var p struct {
				InvocationID uuid.UUID `json:"invocation_id"`
			}
			raw, err := json.Marshal(evs[len(evs)-1].Payload)
			if err != nil || json.Unmarshal(raw, &p) != nil || p.InvocationID != invocation {
				t.Fatalf("message.created payload %s, want invocation_id %v", raw, invocation)
			}
		}},
		{name: "an answer refused", token: "tok", answerErr: problem.ErrConflict, wantErr: problem.ErrConflict},
		{name: "a token without invocations", token: "tok", noPort: true, wantErr: problem.ErrValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := &fakeInvocations{answerID: invocation, answerErr: tc.answerErr}
			if !tc.noPort {
				e.withInvocations(t, f)
			}
			var th chat.Thread
			if tc.dm {
				ch, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin})
				if err != nil {
					t.Fatalf("CreateDirect: %v", err)
				}
				th, _ = e.thread(t, ch, "first")
			} else {
				ch := e.channel(t, e.space(t, "Support").ID, "general")
				e.authz.readers[ch.ID] = []uuid.UUID{robin, alex, sam} // Robin's mention resolves
				th, _ = e.thread(t, ch, "first")
			}
			f.mu.Lock()
			f.invoked = nil // the thread's first message
			f.mu.Unlock()
			before := len(e.appender.events())
			m, err := e.svc.Messages().Post(as(t, sam), chat.MessageInput{ThreadID: th.ID, ContentMD: "@robin hello", InvocationToken: tc.token})
			if tc.wantErr != nil {
				if !errorsIs(err, tc.wantErr) {
					t.Fatalf("Post = %v, want %v", err, tc.wantErr)
				}
				if n := len(e.appender.events()); n != before {
					t.Fatalf("%d events appended by a refused post", n-before)
				}
				return
			}
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			tc.check(t, f, m, e)
		})
	}
}
