package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// TestEchoAnswersOnceAcrossAKill is the acceptance as a test: Sam @mentions echo, the
// agent starts a run and is killed (SIGKILL) before it replies; started again, it answers from
// its consumer: exactly one reply, linked to the invocation, and one run, succeeded, in Sam's
// catch-up. A third start answers nothing more.
func TestEchoAnswersOnceAcrossAKill(t *testing.T) {
	t.Parallel()
	w := serve(t)
	// The reply waits long after the run starts, so the kill always lands mid-run.
	agent := w.startEcho(t, "ECHO_REPLY_DELAY=10m")
	waitFor(t, "the echo consumer exists", func() (bool, string) {
		s, _ := w.call(t, w.echoToken, http.MethodGet, "/api/v1/consumers/echo", nil, nil)
		return s == http.StatusOK, fmt.Sprintf("%d; log:\n%s", s, agent.log())
	})

	thread := w.threads["demo:support-tickets-1"]
	mentionSeq := w.postAndFind(t, "sam", thread, "@echo hello")

	// The run starts (run.created in Sam's catch-up); then the agent dies mid-run.
	var runID string
	waitFor(t, "the run starts", func() (bool, string) {
		for _, ev := range w.events(t, "sam", mentionSeq) {
			if ev.Type == "run.created" {
				var p struct {
					RunID        string `json:"run_id"`
					AgentID      string `json:"agent_id"`
					InvocationID string `json:"invocation_id"`
					State        string `json:"state"`
				}
				if err := json.Unmarshal(ev.Payload, &p); err == nil && p.AgentID == w.ids["echo"] {
					runID = p.RunID
					return p.InvocationID != "" && p.State == "running", string(ev.Payload)
				}
			}
		}
		return false, agent.log()
	})
	agent.signal(t, syscall.SIGKILL)
	if replies := w.replies(t, thread); len(replies) != 0 {
		t.Fatalf("replies before the restart: %q, want none (the agent died mid-run)", replies)
	}

	again := w.startEcho(t)
	var run struct {
		ID           string `json:"id"`
		State        string `json:"state"`
		InvocationID string `json:"invocation_id"`
	}
	waitFor(t, "the run succeeds after the restart", func() (bool, string) {
		s, _ := w.call(t, w.tokens["sam"], http.MethodGet, "/api/v1/runs/"+runID, nil, &run)
		return s == http.StatusOK && run.State == "succeeded", fmt.Sprintf("%d %+v; log:\n%s", s, run, again.log())
	})
	assertOneAnswer(t, w, thread, mentionSeq, runID, run.InvocationID)

	// A clean stop and a third start: the consumer was acknowledged past the invocation,
	// so nothing is answered again; the consumer reaching the head proves the agent looked.
	again.signal(t, syscall.SIGTERM)
	third := w.startEcho(t)
	head := w.postAndFind(t, "sam", w.threads["demo:support-tickets-2"], "Something for the agent to read past")
	waitFor(t, "the third start reaches the head", func() (bool, string) {
		var c struct {
			AckedSeq int64 `json:"acked_seq"`
		}
		s, _ := w.call(t, w.echoToken, http.MethodGet, "/api/v1/consumers/echo", nil, &c)
		return s == http.StatusOK && c.AckedSeq >= head, fmt.Sprintf("%d %+v; log:\n%s", s, c, third.log())
	})
	assertOneAnswer(t, w, thread, mentionSeq, runID, run.InvocationID)
}

// assertOneAnswer checks Sam's view: one reply by echo in the thread, echoing the mention,
// and in Sam's catch-up after the mention exactly one message.created of the agent, linked to
// the invocation, and exactly one run of the agent, created once and finished as succeeded.
func assertOneAnswer(t *testing.T, w *world, thread string, after int64, runID, invocationID string) {
	t.Helper()
	replies := w.replies(t, thread)
	if len(replies) != 1 || replies[0].ContentMD != "Echo: hello" || invocationID == "" {
		t.Fatalf("echo's replies %+v, want exactly one \"Echo: hello\" (invocation %q)", replies, invocationID)
	}
	created, succeeded, posted := 0, 0, 0
	for _, ev := range w.events(t, "sam", after) {
		var p struct {
			RunID        string `json:"run_id"`
			AgentID      string `json:"agent_id"`
			AuthorID     string `json:"author_id"`
			InvocationID string `json:"invocation_id"`
			State        string `json:"state"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			continue
		}
		if ev.Type == "message.created" && p.AuthorID == w.ids["echo"] {
			if p.InvocationID != invocationID {
				t.Fatalf("echo's reply names invocation %q, want %q", p.InvocationID, invocationID)
			}
			posted++
		}
		if !strings.HasPrefix(ev.Type, "run.") || p.AgentID != w.ids["echo"] {
			continue
		}
		if p.RunID != runID {
			t.Fatalf("a second run %s of the agent (first %s)", p.RunID, runID)
		}
		switch {
		case ev.Type == "run.created":
			created++
		case p.State == "succeeded":
			succeeded++
		}
	}
	if created != 1 || succeeded != 1 || posted != 1 {
		t.Fatalf("Sam's catch-up has %d run.created, %d run.updated succeeded and %d replies of the agent, want one each", created, succeeded, posted)
	}
}

// reply is a message of the agent, as far as the test reads it.
type reply struct {
	ContentMD string `json:"content_md"`
}

// replies are echo's messages in the thread, as Sam reads them.
func (w *world) replies(t *testing.T, thread string) []reply {
	t.Helper()
	var list struct {
		Items []struct {
			reply
			AuthorID string `json:"author_id"`
		} `json:"items"`
	}
	if s, _ := w.call(t, w.tokens["sam"], http.MethodGet, "/api/v1/threads/"+thread+"/messages", nil, &list); s != http.StatusOK {
		t.Fatalf("listMessages as Sam = %d", s)
	}
	var out []reply
	for _, m := range list.Items {
		if m.AuthorID == w.ids["echo"] {
			out = append(out, m.reply)
		}
	}
	return out
}
