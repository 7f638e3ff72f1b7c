// The entry point: mounts the app (index.html loads this file and the CSS; nothing inline, as
// the server's Content-Security-Policy wants).
import { render } from "preact";
import { App } from "./app.js";
import "./styles.css";

render(<App />, document.getElementById("app")!);
