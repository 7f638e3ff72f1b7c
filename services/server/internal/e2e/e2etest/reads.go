package e2etest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// The read API (ADR 0029): getSpace, getChannel, getThread, getMessage,
// listChannelMembers and getDraft, through real HTTP and the validating client.

// ReadPaths are the single-object reads of the ChatWorld's Support side as Sam sees them,
// and the channel's members.
func (w *ChatWorld) ReadPaths() map[string]string {
	return map[string]string{
		"getSpace":           "/api/v1/spaces/" + w.Support.String(),
		"getChannel":         "/api/v1/channels/" + w.Tickets.String(),
		"getThread":          "/api/v1/threads/" + w.TicketThread.String(),
		"getMessage":         "/api/v1/messages/" + w.TicketFirstMsg.String(),
		"listChannelMembers": "/api/v1/channels/" + w.Tickets.String() + "/members",
	}
}

// Members pages through the channel's members as a with limit (0: none given) and returns
// every item and the number of pages it took.
func (w *ChatWorld) Members(t *testing.T, a Actor, channel uuid.UUID, limit int) ([]apigen.ChannelMember, int) {
	t.Helper()
	var (
		all    []apigen.ChannelMember
		cursor *uuid.UUID
		pages  int
	)
	for {
		path := "/api/v1/channels/" + channel.String() + "/members?"
		if limit != 0 {
			path += fmt.Sprintf("limit=%d&", limit)
		}
		if cursor != nil {
			path += "cursor=" + cursor.String()
		}
		var page apigen.ChannelMemberList
		w.Must(t, a, http.MethodGet, path, "", http.StatusOK, &page)
		pages++
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all, pages
		}
		if limit > 0 && len(page.Items) > limit {
			t.Fatalf("page of %d members, limit %d", len(page.Items), limit)
		}
		cursor = page.NextCursor
		if pages > 100 {
			t.Fatal("the members never end")
		}
	}
}
