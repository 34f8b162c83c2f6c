// Task queue names shared by the workers (Node) and the workflows (sandbox). Conversions go to their own
// queue, served with as many slots as the converter can take: the backlog then waits in Temporal (durable, visible, fair) instead of overflowing the LibreOffice pool's queue,
// and callbacks and other activities on the main queue never wait behind it.
export function officeTaskQueue(mainTaskQueue: string): string {
  return `${mainTaskQueue}-office`;
}
