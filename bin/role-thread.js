// Entry point of a role's worker thread (cli/roles/worker-thread.ts): registers the TypeScript
// loader, which a worker does not inherit, then hands over to the thread's side of the role.
import { register } from 'tsx/esm/api';

register();
await import('../cli/roles/worker-thread-main.ts');
