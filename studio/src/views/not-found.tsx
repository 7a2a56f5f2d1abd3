/** Any path under /studio that is not a view. */
export function NotFound() {
  return (
    <section aria-labelledby="nf">
      <h1 id="nf">Not found</h1>
      <p>
        There is no such page in the Studio. <a href="/studio/approvals">Go to approvals</a>.
      </p>
    </section>
  );
}
