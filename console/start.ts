import { startFirstRequests } from './first-requests.ts';
import { keyFromFragment, storedKey } from './session.ts';

/**
 * The head script, inlined into index.html by build.ts ahead of the stylesheet (a script
 * after one waits for it): with a key to check, it starts the first requests
 * (first-requests.ts) as the page arrives, while the console's script loads. The tokens page
 * is the default one, so an empty route is it too.
 */

keyFromFragment();
const key = storedKey();
const page = location.hash.replace(/^#\/?/, '').split(/[/?]/)[0];
if (key !== null) startFirstRequests(key, page === '' || page === 'tokens');
