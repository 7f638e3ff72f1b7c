// The scenario: every operation of api/openapi.yaml, as a client would call them, through
// Prism's validating proxy. Alex is the owner; Sam a person; Robin a person who is
// deactivated and reactivated; an app and an agent are created.

import { randomUUID } from "node:crypto";
import type { components } from "../gen/schema.js";
import { client, expect, type Record } from "./check.js";

type Event = components["schemas"]["Event"];

/** Where the scenario runs: Prism's address and the owner's token. */
export interface Target {
  base: string;
  ownerToken: string;
}

const idem = () => ({ "Idempotency-Key": randomUUID() });

/** run walks every operation; the events it saw are returned for the typed-event check. */
export async function run(t: Target, r: Record): Promise<Event[]> {
  const alex = client(t.base, r, t.ownerToken);
  const anonymous = client(t.base, r);

  r.step = "operational endpoints";
  expect(r, "getHealth", 200, await anonymous.GET("/healthz"));
  expect(r, "getReadiness", 200, await anonymous.GET("/readyz"));
  expect(r, "getMetrics", 200, await anonymous.GET("/metrics", { parseAs: "text" }));

  r.step = "who am I";
  expect(r, "getMe", 401, await anonymous.GET("/api/v1/me"));
  const me = expect(r, "getMe", 200, await alex.GET("/api/v1/me"));
  expect(r, "getInstance", 200, await alex.GET("/api/v1/instance"));

  r.step = "people, apps, agents and tokens";
  const sam = expect(r, "createPerson", 201, await alex.POST("/api/v1/people", {
    params: { header: idem() },
    body: { display_name: "Sam", handle: "sam", email: "sam@example.com" },
  }));
  expect(r, "createPerson", 409, await alex.POST("/api/v1/people", {
    params: { header: idem() },
    body: { display_name: "Sam again", handle: "sam", email: "sam2@example.com" },
  }));
  const robin = expect(r, "createPerson", 201, await alex.POST("/api/v1/people", {
    params: { header: idem() },
    body: { display_name: "Robin", handle: "robin", email: "robin@example.com" },
  }));
  expect(r, "createApp", 201, await alex.POST("/api/v1/apps", {
    params: { header: idem() },
    body: { display_name: "Build bot", handle: "build-bot", scopes: ["events:subscribe", "messages:read"] },
  }));
  const echo = expect(r, "createAgent", 201, await alex.POST("/api/v1/agents", {
    params: { header: idem() },
    body: { display_name: "Echo", handle: "echo", description: "Answers what it is asked." },
  }));
  expect(r, "listAgents", 200, await alex.GET("/api/v1/agents"));
  const samToken = expect(r, "createToken", 201, await alex.POST("/api/v1/principals/{principal_id}/tokens", {
    params: { path: { principal_id: sam.id }, header: idem() },
    body: { device_name: "Sam's laptop", device_status: "approved" },
  }));
  const pending = expect(r, "createToken", 201, await alex.POST("/api/v1/principals/{principal_id}/tokens", {
    params: { path: { principal_id: sam.id }, header: idem() },
    body: { device_name: "Sam's phone" },
  }));
  if (pending.device_id !== undefined) {
    expect(r, "approveDevice", 200, await alex.POST("/api/v1/devices/{device_id}/approve", {
      params: { path: { device_id: pending.device_id }, header: idem() },
    }));
  }
  expect(r, "approveDevice", 404, await alex.POST("/api/v1/devices/{device_id}/approve", {
    params: { path: { device_id: randomUUID() }, header: idem() },
  }));
  const tokens = expect(r, "listTokens", 200, await alex.GET("/api/v1/tokens", { params: { query: { principal_id: sam.id } } }));
  expect(r, "revokeToken", 200, await alex.POST("/api/v1/tokens/{token_id}/revoke", {
    params: { path: { token_id: pending.token_id }, header: idem() },
  }));
  if (tokens.items.length < 2) {
    throw new Error("listTokens: Sam's two tokens are not listed");
  }
  expect(r, "deactivatePrincipal", 200, await alex.POST("/api/v1/principals/{principal_id}/deactivate", {
    params: { path: { principal_id: robin.id }, header: idem() },
  }));
  expect(r, "reactivatePrincipal", 200, await alex.POST("/api/v1/principals/{principal_id}/reactivate", {
    params: { path: { principal_id: robin.id }, header: idem() },
  }));
  const samClient = client(t.base, r, samToken.token);
  const echoToken = expect(r, "createToken", 201, await alex.POST("/api/v1/principals/{principal_id}/tokens", {
    params: { path: { principal_id: echo.id }, header: idem() },
    body: {},
  }));
  const echoClient = client(t.base, r, echoToken.token);

  r.step = "the directory";
  expect(r, "listPrincipals", 200, await samClient.GET("/api/v1/principals", { params: { query: { prefix: "ro", limit: 5 } } }));
  expect(r, "getPrincipal", 200, await samClient.GET("/api/v1/principals/{principal_id}", { params: { path: { principal_id: robin.id } } }));
  expect(r, "getPrincipal", 404, await samClient.GET("/api/v1/principals/{principal_id}", { params: { path: { principal_id: randomUUID() } } }));

  r.step = "agent presence and consumers";
  expect(r, "sendAgentHeartbeat", 200, await echoClient.POST("/api/v1/agents/me/heartbeat", { body: { reported_billing_mode: "subscription" } }));
  expect(r, "createConsumer", 201, await echoClient.PUT("/api/v1/consumers/{name}", { params: { path: { name: "replies" } } }));
  expect(r, "createConsumer", 200, await echoClient.PUT("/api/v1/consumers/{name}", { params: { path: { name: "replies" } } }));
  expect(r, "createConsumer", 201, await echoClient.PUT("/api/v1/consumers/{name}", { params: { path: { name: "scratch" } } }));
  expect(r, "listConsumers", 200, await echoClient.GET("/api/v1/consumers"));
  expect(r, "deleteConsumer", 204, await echoClient.DELETE("/api/v1/consumers/{name}", { params: { path: { name: "scratch" } } }));
  expect(r, "getConsumer", 404, await echoClient.GET("/api/v1/consumers/{name}", { params: { path: { name: "scratch" } } }));

  r.step = "spaces, channels and grants";
  const space = expect(r, "createSpace", 201, await alex.POST("/api/v1/spaces", {
    params: { header: idem() },
    body: { name: "Support", description: "Questions from customers." },
  }));
  expect(r, "listSpaces", 200, await alex.GET("/api/v1/spaces"));
  const channel = expect(r, "createChannel", 201, await alex.POST("/api/v1/spaces/{space_id}/channels", {
    params: { path: { space_id: space.id }, header: idem() },
    body: { name: "general", topic: "Everything else." },
  }));
  const spare = expect(r, "createChannel", 201, await alex.POST("/api/v1/spaces/{space_id}/channels", {
    params: { path: { space_id: space.id }, header: idem() },
    body: { name: "archive-me" },
  }));
  expect(r, "listSpaceChannels", 200, await alex.GET("/api/v1/spaces/{space_id}/channels", { params: { path: { space_id: space.id } } }));
  expect(r, "listSpaceChannels", 404, await alex.GET("/api/v1/spaces/{space_id}/channels", { params: { path: { space_id: randomUUID() } } }));
  const grant = expect(r, "createGrant", 201, await alex.POST("/api/v1/grants", {
    params: { header: idem() },
    body: { principal_id: sam.id, resource_kind: "space", resource_id: space.id, role: "member" },
  }));
  const viewer = expect(r, "createGrant", 201, await alex.POST("/api/v1/grants", {
    params: { header: idem() },
    body: { principal_id: robin.id, resource_kind: "channel", resource_id: channel.id, role: "viewer" },
  }));
  expect(r, "createGrant", 201, await alex.POST("/api/v1/grants", {
    params: { header: idem() },
    body: { principal_id: echo.id, resource_kind: "space", resource_id: space.id, role: "member" },
  }));
  // Valid for the document, refused by a rule it cannot state (Prism itself answers requests
  // the document refuses, so a 400 must come from such a rule to reach bothy).
  expect(r, "createGrant", 400, await alex.POST("/api/v1/grants", {
    params: { header: idem() },
    body: { principal_id: sam.id, resource_kind: "space", role: "member" },
  }));
  expect(r, "listGrants", 200, await alex.GET("/api/v1/grants", { params: { query: { principal_id: sam.id } } }));

  r.step = "threads and messages";
  const thread = expect(r, "createThread", 201, await samClient.POST("/api/v1/channels/{channel_id}/threads", {
    params: { path: { channel_id: channel.id }, header: idem() },
    body: { title: "Refunds", content_md: "How do refunds work, @alex?" },
  }));
  const reply = expect(r, "postMessage", 201, await alex.POST("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, header: idem() },
    body: { content_md: "Within 30 days, @sam." },
  }));
  const extra = expect(r, "postMessage", 201, await alex.POST("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, header: idem() },
    body: { content_md: "A message to delete." },
  }));
  r.step = "reactions";
  expect(r, "addReaction", 204, await samClient.PUT("/api/v1/messages/{message_id}/reactions/{reaction}", {
    params: { path: { message_id: reply.id, reaction: ":thumbs_up:" } },
  }));
  expect(r, "addReaction", 204, await alex.PUT("/api/v1/messages/{message_id}/reactions/{reaction}", {
    params: { path: { message_id: reply.id, reaction: "\u{1F389}" } },
  }));
  expect(r, "removeReaction", 204, await alex.DELETE("/api/v1/messages/{message_id}/reactions/{reaction}", {
    params: { path: { message_id: reply.id, reaction: "\u{1F389}" } },
  }));
  expect(r, "addReaction", 404, await samClient.PUT("/api/v1/messages/{message_id}/reactions/{reaction}", {
    params: { path: { message_id: randomUUID(), reaction: ":thumbs_up:" } },
  }));

  r.step = "threads and messages";
  expect(r, "editMessage", 200, await alex.PATCH("/api/v1/messages/{message_id}", {
    params: { path: { message_id: reply.id } },
    body: { content_md: "Within 30 days of purchase, @sam." },
  }));
  expect(r, "deleteMessage", 204, await alex.DELETE("/api/v1/messages/{message_id}", {
    params: { path: { message_id: extra.id } },
  }));
  const page = expect(r, "listMessages", 200, await samClient.GET("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, query: { limit: 1 } },
  }));
  expect(r, "listMessages", 200, await samClient.GET("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, query: page.next_cursor === undefined ? {} : { after: page.next_cursor } },
  }));
  expect(r, "updateReadState", 200, await samClient.PUT("/api/v1/threads/{thread_id}/read-state", {
    params: { path: { thread_id: thread.id } },
    body: { last_read_seq: reply.seq },
  }));
  expect(r, "saveDraft", 200, await samClient.PUT("/api/v1/channels/{channel_id}/draft", {
    params: { path: { channel_id: channel.id } },
    body: { content_md: "Thanks, I will", thread_id: thread.id },
  }));
  expect(r, "getDraft", 200, await samClient.GET("/api/v1/channels/{channel_id}/draft", {
    params: { path: { channel_id: channel.id }, query: { thread_id: thread.id } },
  }));
  expect(r, "deleteDraft", 204, await samClient.DELETE("/api/v1/channels/{channel_id}/draft", {
    params: { path: { channel_id: channel.id }, query: { thread_id: thread.id } },
  }));
  expect(r, "putSetting", 200, await samClient.PUT("/api/v1/me/settings/{key}", {
    params: { path: { key: "theme" } },
    body: { value: "dark" },
  }));
  expect(r, "putSidebar", 200, await samClient.PUT("/api/v1/me/sidebar", {
    body: { sections: [{ key: "favourites", title: "Favourites", collapsed: false, channel_ids: [channel.id] }] },
  }));
  r.step = "reads a client renders with";
  const spaceRead = await samClient.GET("/api/v1/spaces/{space_id}", { params: { path: { space_id: space.id } } });
  expect(r, "getSpace", 200, spaceRead);
  const etag = spaceRead.response.headers.get("ETag") ?? "";
  expect(r, "getSpace", 304, await samClient.GET("/api/v1/spaces/{space_id}", {
    params: { path: { space_id: space.id }, header: { "If-None-Match": etag } },
  }));
  expect(r, "getSpace", 404, await samClient.GET("/api/v1/spaces/{space_id}", { params: { path: { space_id: randomUUID() } } }));
  expect(r, "getChannel", 200, await samClient.GET("/api/v1/channels/{channel_id}", { params: { path: { channel_id: channel.id } } }));
  expect(r, "listChannelMembers", 200, await samClient.GET("/api/v1/channels/{channel_id}/members", {
    params: { path: { channel_id: channel.id }, query: { limit: 2 } },
  }));
  expect(r, "listChannelThreads", 200, await samClient.GET("/api/v1/channels/{channel_id}/threads", {
    params: { path: { channel_id: channel.id }, query: { limit: 10 } },
  }));
  expect(r, "getThread", 200, await samClient.GET("/api/v1/threads/{thread_id}", { params: { path: { thread_id: thread.id } } }));
  expect(r, "getMessage", 200, await samClient.GET("/api/v1/messages/{message_id}", { params: { path: { message_id: reply.id } } }));
  const found = expect(r, "searchMessages", 200, await samClient.GET("/api/v1/search/messages", {
    params: { query: { q: "purchase", channel_id: channel.id } },
  }));
  if (found.items.length !== 1) {
    throw new Error(`searchMessages found ${found.items.length} messages for "purchase", want the edited reply`);
  }

  r.step = "an agent's run";
  const run = expect(r, "createRun", 201, await echoClient.POST("/api/v1/threads/{thread_id}/runs", {
    params: { path: { thread_id: thread.id }, header: idem() },
    body: { requested_by: sam.id, progress: "Reading the thread" },
  }));
  expect(r, "updateRun", 200, await echoClient.PATCH("/api/v1/runs/{run_id}", {
    params: { path: { run_id: run.id } },
    body: { state: "running", progress: "Looking up the refund policy" },
  }));
  expect(r, "getRun", 200, await samClient.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: run.id } } }));
  expect(r, "cancelRun", 200, await samClient.POST("/api/v1/runs/{run_id}/cancel", { params: { path: { run_id: run.id } } }));
  expect(r, "updateRun", 409, await echoClient.PATCH("/api/v1/runs/{run_id}", {
    params: { path: { run_id: run.id } },
    body: { state: "succeeded" },
  }));

  r.step = "an invocation";
  const before = expect(r, "listEvents", 200, await echoClient.GET("/api/v1/events", { params: { query: { after: 0, limit: 1 } } }));
  const asking = expect(r, "postMessage", 201, await samClient.POST("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, header: idem() },
    body: { content_md: "@echo what is the refund window?" },
  }));
  // The invocation reaches Echo with its delivery-only token (spec 03, ADR 0031).
  type Delivered = { type: string; payload: { id?: string; message_id?: string }; invocation_token?: string };
  let invocation: Delivered | undefined;
  for (let after = before.head_seq, pages = 0; invocation === undefined && pages < 100; pages++) {
    const batch = expect(r, "listEvents", 200, await echoClient.GET("/api/v1/events", { params: { query: { after } } }));
    invocation = (batch.events as Delivered[]).find((e) => e.type === "invocation.requested" && e.payload.message_id === asking.id);
    if (batch.next_cursor >= batch.head_seq) {
      break;
    }
    after = batch.next_cursor;
  }
  if (invocation?.payload.id === undefined || invocation.invocation_token === undefined) {
    throw new Error("Echo's catch-up lacks the invocation.requested of Sam's mention, or its invocation_token");
  }
  const invocationID = invocation.payload.id;
  expect(r, "ackInvocation", 404, await echoClient.POST("/api/v1/invocations/{invocation_id}/ack", {
    params: { path: { invocation_id: invocationID } },
    body: { invocation_token: "not-the-token" },
  }));
  expect(r, "ackInvocation", 200, await echoClient.POST("/api/v1/invocations/{invocation_id}/ack", {
    params: { path: { invocation_id: invocationID } },
    body: { invocation_token: invocation.invocation_token },
  }));
  expect(r, "postMessage", 201, await echoClient.POST("/api/v1/threads/{thread_id}/messages", {
    params: { path: { thread_id: thread.id }, header: idem() },
    body: { content_md: "30 days.", invocation_token: invocation.invocation_token },
  }));
  expect(r, "getInvocation", 200, await samClient.GET("/api/v1/invocations/{invocation_id}", {
    params: { path: { invocation_id: invocationID } },
  }));
  expect(r, "getInvocation", 404, await samClient.GET("/api/v1/invocations/{invocation_id}", {
    params: { path: { invocation_id: randomUUID() } },
  }));

  expect(r, "createDirectMessage", 201, await samClient.POST("/api/v1/dms", {
    params: { header: idem() },
    body: { participant_ids: [me.id] },
  }));
  expect(r, "createDirectMessage", 200, await samClient.POST("/api/v1/dms", {
    params: { header: idem() },
    body: { participant_ids: [me.id] },
  }));

  r.step = "archives and revokes";
  expect(r, "revokeGrant", 204, await alex.DELETE("/api/v1/grants/{grant_id}", { params: { path: { grant_id: viewer.id } } }));
  expect(r, "archiveChannel", 200, await alex.POST("/api/v1/channels/{channel_id}/archive", {
    params: { path: { channel_id: spare.id }, header: idem() },
  }));
  const old = expect(r, "createSpace", 201, await alex.POST("/api/v1/spaces", {
    params: { header: idem() },
    body: { name: "Old projects" },
  }));
  expect(r, "archiveSpace", 200, await alex.POST("/api/v1/spaces/{space_id}/archive", {
    params: { path: { space_id: old.id }, header: idem() },
  }));
  void grant;

  r.step = "the agent's consumer";
  const delivered = expect(r, "listConsumerEvents", 200, await echoClient.GET("/api/v1/consumers/{name}/events", {
    params: { path: { name: "replies" }, query: { limit: 50 } },
  }));
  // Reading ahead of the acks: the page after the last one's next_cursor.
  expect(r, "listConsumerEvents", 200, await echoClient.GET("/api/v1/consumers/{name}/events", {
    params: { path: { name: "replies" }, query: { after: delivered.next_cursor, limit: 50 } },
  }));
  const last = delivered.events.at(-1);
  if (last !== undefined) {
    expect(r, "ackEvents", 200, await echoClient.POST("/api/v1/consumers/{name}/ack", {
      params: { path: { name: "replies" } },
      body: { seq: last.seq },
    }));
  }
  expect(r, "getConsumer", 200, await echoClient.GET("/api/v1/consumers/{name}", { params: { path: { name: "replies" } } }));

  r.step = "sync";
  const snapshot = expect(r, "getSnapshot", 200, await alex.GET("/api/v1/sync/snapshot"));
  expect(r, "listEvents", 410, await alex.GET("/api/v1/events", {
    params: { query: { after: 0, epoch: randomUUID() } },
  }));
  const events: Event[] = [];
  for (const [who, c] of [["Alex", alex], ["Sam", samClient], ["Echo", echoClient]] as const) {
    r.step = `sync: ${who}'s catch-up`;
    let after = 0;
    for (;;) {
      const batch = expect(r, "listEvents", 200, await c.GET("/api/v1/events", {
        params: { query: { after, epoch: snapshot.sync_epoch, limit: 50 } },
      }));
      events.push(...batch.events);
      if (batch.next_cursor >= batch.head_seq || batch.next_cursor <= after) {
        break;
      }
      after = batch.next_cursor;
    }
  }
  return events;
}
