/**
 * Timeouts for many pending calls with one timer per timeout value instead of one per call.
 *
 * Calls with the same timeout expire in the order they started, so each group is a doubly
 * linked list in deadline order: adding and removing are O(1) and allocate one node. One timer
 * per group is armed for the head's deadline; when it fires early (the head already finished)
 * it re-arms for the new head. The timer keeps the process alive only while the group has
 * pending calls (ref/unref), exactly as one timer per call would.
 */

export interface DeadlineNode {
  /** `performance.now()` value at which the call expires. */
  at: number;
  prev?: DeadlineNode;
  next?: DeadlineNode;
  group?: DeadlineGroup;
  expire: () => void;
}

class DeadlineGroup {
  head?: DeadlineNode;
  tail?: DeadlineNode;
  timer?: ReturnType<typeof setTimeout>;
  /** Deadline the timer is armed for. */
  armedFor = Number.POSITIVE_INFINITY;

  constructor(readonly ms: number) {}

  add(node: DeadlineNode): void {
    node.group = this;
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail !== undefined) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    if (this.timer === undefined) this.#arm(node.at);
    else if (this.head === node) {
      this.timer.ref();
      if (node.at < this.armedFor) this.#arm(node.at);
    }
  }

  remove(node: DeadlineNode): void {
    if (node.group !== this) return;
    if (node.prev !== undefined) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next !== undefined) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = node.group = undefined;
    // Nothing pending: let the process exit; the timer stays armed and fires harmlessly.
    if (this.head === undefined) this.timer?.unref();
  }

  #arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(this.#fire, Math.max(0, Math.ceil(at - performance.now())));
  }

  readonly #fire = (): void => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    while (this.head !== undefined && this.head.at <= now) {
      const node = this.head;
      this.remove(node);
      node.expire();
    }
    if (this.head !== undefined) this.#arm(this.head.at);
  };

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.head = this.tail = undefined;
  }
}

export class Deadlines {
  readonly #groups = new Map<number, DeadlineGroup>();

  /** Calls `expire` after `ms` unless the returned node is cancelled first. */
  schedule(ms: number, expire: () => void): DeadlineNode {
    let group = this.#groups.get(ms);
    if (group === undefined) {
      group = new DeadlineGroup(ms);
      this.#groups.set(ms, group);
    }
    const node: DeadlineNode = { at: performance.now() + ms, expire };
    group.add(node);
    return node;
  }

  cancel(node: DeadlineNode): void {
    node.group?.remove(node);
  }

  /** Cancels everything (the owner is closing). */
  clear(): void {
    for (const group of this.#groups.values()) group.clear();
    this.#groups.clear();
  }
}
