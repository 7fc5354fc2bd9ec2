// Entry of the consumer apps (Vite and webpack): the README's storefront example, pasted in as src/storefront.js by
// the test, or (?worker=factory) the README's `worker` factory option; plus a hook the test drives from Chromium.
import { installTestHook } from './testHook.js';

const mode = new URLSearchParams(location.search).get('worker');
const app = mode === 'factory' ? import('./factory.js') : import('./storefront.js');

app.then(({ lookup }) => installTestHook(lookup));
