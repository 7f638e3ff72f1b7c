// The sign-in page: a token field and where tokens come from (the shell shows it until a token
// is accepted, and again when the server stops accepting it).
import { useEffect, useRef, useState } from "preact/hooks";

/** The sign-in form: calls onToken with what was typed; error is the last attempt's failure. */
export function SignIn({ onToken, error }: { onToken: (t: string) => Promise<void>; error: string }) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <main class="signin" id="main">
      <h1>Sign in to bothy</h1>
      <form
        onSubmit={async (ev) => {
          ev.preventDefault();
          if (!token.trim()) return;
          setBusy(true);
          await onToken(token.trim());
          setBusy(false);
        }}
      >
        <label for="token">Access token</label>
        <input
          id="token"
          ref={input}
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="bothy_..."
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby="token-help"
          aria-invalid={error ? true : undefined}
        />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in" : "Sign in"}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <section id="token-help" class="help" aria-label="Where tokens come from">
        <p>A token stands for one person, agent or app. To get one:</p>
        <ul>
          <li>
            <code>make run</code> prints the owner's token (Alex) on the first start.
          </li>
          <li>
            <code>make demo</code> creates Sam, Robin and an agent, and prints a fresh token for each.
          </li>
          <li>
            <code>bothy admin token</code> issues a token for anyone, and the owner can issue tokens through the API.
          </li>
        </ul>
        <p>The token stays in this browser until you sign out.</p>
      </section>
    </main>
  );
}
