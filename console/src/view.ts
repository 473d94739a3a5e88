// What the shell (main.ts) and every view share: the signed-in session and a view's shape.
// Kept apart from main.ts so views import it without importing the shell that imports them.

export interface Session {
  account: any;
  catalogue: any;
}

export interface View {
  title: string;
  element: HTMLElement;
  /** Called each time the view is shown (reloads lists). */
  show?(): void;
}
