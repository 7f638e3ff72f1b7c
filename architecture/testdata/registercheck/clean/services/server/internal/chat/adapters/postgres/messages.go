package postgres

// Action names look like schema references but are not SQL.
const receiveAction = "instance.read"

const listMessages = `
SELECT id, content_md
FROM chat.messages
WHERE thread_id = $1 /* never sync.event_log */
  AND content_md <> 'instance.read'
ORDER BY id`

var insertMessage = "INSERT INTO chat.messages (id, thread_id, content_md) " +
	"VALUES ($1, $2, $3)"
