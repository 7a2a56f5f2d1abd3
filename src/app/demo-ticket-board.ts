/** One ticket of the demo ticket service. */
export interface DemoTicket {
  id: string;
  title: string;
  body?: string;
  status: 'open' | 'closed';
  createdAt: string;
  closedAt?: string;
}

/** What the pages show besides the tickets: whether the reader is signed in, and a message. */
export interface PageState {
  signedIn: boolean;
  error?: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and attribute values. */
function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function page(title: string, state: PageState, main: string): string {
  const nav = state.signedIn
    ? '<a href="/">Board</a> · <a href="/tickets/new" id="new-ticket">New ticket</a>'
    : '<a href="/">Board</a> · <a href="/login" id="sign-in">Sign in</a>';
  const error = state.error ? `<p role="alert" class="error">${esc(state.error)}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;margin:2rem;max-width:40rem}.error{color:#b00}li{margin:.3rem 0}</style>
</head><body><nav>${nav}</nav>${error}${main}</body></html>`;
}

/** The board: every ticket, newest first. */
export function boardPage(tickets: DemoTicket[], state: PageState): string {
  const items = tickets
    .map(
      (t) =>
        `<li class="ticket ${t.status}"><a href="/tickets/${esc(t.id)}">${esc(t.id)}</a> <span class="title">${esc(t.title)}</span> <em>${t.status}</em></li>`,
    )
    .join('');
  return page(
    'Ticket board',
    state,
    `<h1>Ticket board</h1><p id="count">${tickets.length} tickets</p><ul id="tickets">${items}</ul>`,
  );
}

/** One ticket. */
export function ticketPage(t: DemoTicket, state: PageState): string {
  return page(
    `${t.id}: ${t.title}`,
    state,
    `<h1 id="title">${esc(t.title)}</h1><p>${esc(t.id)} · <span id="status">${t.status}</span> · opened ${esc(t.createdAt)}</p><pre id="body">${esc(t.body ?? '')}</pre>`,
  );
}

/** The sign-in form. */
export function loginPage(state: PageState): string {
  return page(
    'Sign in',
    state,
    `<h1>Sign in</h1><form method="post" action="/login">
<label>User <input name="username" id="username" autocomplete="username" value="demo"></label>
<label>Password <input name="password" id="password" type="password" autocomplete="current-password"></label>
<button type="submit" id="submit">Sign in</button></form>`,
  );
}

/** The new-ticket form (signed in only). */
export function newTicketPage(state: PageState): string {
  return page(
    'New ticket',
    state,
    `<h1>New ticket</h1><form method="post" action="/tickets/new">
<label>Title <input name="title" id="ticket-title" maxlength="200" required></label>
<label>Body <textarea name="body" id="ticket-body" maxlength="5000"></textarea></label>
<button type="submit" id="create">Create</button></form>`,
  );
}

/** A page for a path that names nothing. */
export function notFoundPage(state: PageState): string {
  return page('Not found', state, '<h1>Not found</h1>');
}
