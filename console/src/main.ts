/**
 * The console's entry: one live feed, and a view per hash route (#/, #/topics, #/topics/<name>,
 * #/groups, #/groups/<name>, #/messages?topic=..). No framework: each view builds its DOM and
 * updates it in place on each snapshot of the feed.
 */
import { LiveFeed } from "./live.js";
import type { View } from "./view.js";
import { groupsView, groupView } from "./views/groups.js";
import { messagesView } from "./views/messages.js";
import { overviewView } from "./views/overview.js";
import { topicView } from "./views/topic.js";
import { topicsView } from "./views/topics.js";

const root = document.getElementById("view")!;
const live = new LiveFeed(document.getElementById("live")!);
let leave: (() => void) | null = null;

function route(): void {
  const [path = "", search = ""] = location.hash.replace(/^#\/?/, "").split("?", 2);
  const segments = path === "" ? [] : path.split("/").map(decodeURIComponent);
  const [name = "", ...rest] = segments;
  const views: Record<string, [View, View | null]> = {
    "": [overviewView, null],
    topics: [topicsView, topicView],
    groups: [groupsView, groupView],
    messages: [messagesView, null],
  };
  const [list, detail] = views[name] ?? views[""]!;
  const view = rest.length > 0 && detail !== null ? detail : list;
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    a.classList.toggle("active", a.dataset.nav === (name === "" ? "overview" : name));
  }
  leave?.();
  root.replaceChildren();
  leave = view(root, live, { path: rest, query: new URLSearchParams(search) });
}

window.addEventListener("hashchange", route);
route();
