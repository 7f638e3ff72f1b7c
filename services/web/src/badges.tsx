// The unread and mention badges of a channel (sidebar) or a thread (thread list).

/** An unread count and a mention count, each shown only when above zero, each with a spoken label. */
export function Badges({ unread, mentions }: { unread: number; mentions: number }) {
  return (
    <>
      {mentions > 0 && (
        <span class="badge mention" data-testid="mentions" aria-label={`${mentions} ${mentions === 1 ? "mention" : "mentions"}`}>
          @{mentions}
        </span>
      )}
      {unread > 0 && (
        <span class="badge" data-testid="unread" aria-label={`${unread} unread`}>
          {unread}
        </span>
      )}
    </>
  );
}
