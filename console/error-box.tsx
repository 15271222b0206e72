import { describeError } from './api.ts';

/** An error as the API gave it: its message, and the request id to quote. */
export function ErrorBox({ error }: { error: unknown }) {
  const { message, requestId } = describeError(error);
  return (
    <p class="error" role="alert">
      {message}
      {requestId !== null && <span class="request-id"> (request {requestId})</span>}
    </p>
  );
}
