// palace ui: the little script the desk uses. The pages work without it;
// it adds the live view (server-sent events), path completion in the pack
// inspector and keyboard navigation between cards.
'use strict';

(function () {
  const live = document.getElementById('live');

  // A form being filled in is never replaced under the reviewer's hands.
  function busy() {
    const a = document.activeElement;
    if (a && a.closest && a.closest('form')) return true;
    for (const el of document.querySelectorAll('input:not([type=hidden]), textarea, select')) {
      if (el.value !== el.defaultValue && el.type !== 'checkbox' && el.tagName !== 'SELECT') return true;
    }
    return false;
  }

  // refresh swaps in the page's main content as the server renders it now.
  async function refresh() {
    const res = await fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const next = doc.getElementById('main');
    const main = document.getElementById('main');
    if (!next || !main) return;
    const y = window.scrollY;
    // The message of the reviewer's own change stays until they move on.
    const flash = main.querySelector('p.flash');
    main.replaceChildren(...Array.from(next.childNodes).map((n) => document.importNode(n, true)));
    if (flash && !main.querySelector('p.flash')) main.prepend(flash);
    document.body.dataset.version = doc.body.dataset.version;
    window.scrollTo(0, y);
    live.textContent = 'Updated ' + new Date().toLocaleTimeString() + ': the palace changed.';
  }

  function offerReload() {
    live.replaceChildren(document.createTextNode('The palace changed. '));
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Reload';
    b.addEventListener('click', () => location.reload());
    live.appendChild(b);
  }

  if (window.EventSource && live) {
    const es = new EventSource('/events');
    let pending = false;
    es.addEventListener('change', (e) => {
      // The page shows this version already (it was rendered after it).
      if (Number(e.data) <= Number(document.body.dataset.version)) return;
      if (pending) return;
      pending = true;
      // Coalesce a burst of commits into one refresh.
      setTimeout(() => {
        pending = false;
        if (busy()) offerReload();
        else refresh().catch(offerReload);
      }, 150);
    });
  }

  // Path completion: the datalist of the file field follows what is typed.
  const file = document.querySelector('input[data-complete]');
  if (file) {
    const list = document.getElementById(file.getAttribute('list'));
    let timer = 0;
    file.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const url = file.dataset.complete + '?path=' + encodeURIComponent(file.value);
        const res = await fetch(url, { credentials: 'same-origin' });
        if (!res.ok) return;
        const paths = await res.json();
        list.replaceChildren(...paths.map((p) => { const o = document.createElement('option'); o.value = p; return o; }));
      }, 120);
    });
  }

  // j / k move between the cards of a list; / goes to the first field.
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.key === '/') {
      const f = document.querySelector('main input:not([type=hidden]), main textarea');
      if (f) { e.preventDefault(); f.focus(); }
      return;
    }
    if (e.key !== 'j' && e.key !== 'k') return;
    const cards = Array.from(document.querySelectorAll('main article[tabindex]'));
    if (!cards.length) return;
    const i = cards.indexOf(document.activeElement && document.activeElement.closest('article'));
    const next = e.key === 'j' ? Math.min(cards.length - 1, i + 1) : Math.max(0, i < 0 ? 0 : i - 1);
    e.preventDefault();
    cards[next].focus();
    cards[next].scrollIntoView({ block: 'nearest' });
  });
})();
