/**
 * The package's own files the program reads at run time (package.json, the default world, the
 * console's files). They are read from the package folder, except in the single executable
 * (`dist/dcb-linux-x64`), whose entry hands over a reader of the files embedded in it: there is no
 * package folder there.
 */
let embedded: ((path: string) => Buffer) | undefined

/** Called once by the single executable's entry, before anything reads a package file. */
export function useEmbeddedFiles(read: (path: string) => Buffer): void {
  embedded = read
}

/** The embedded file at this path of the package (`console/app.js` for the console's), or undefined outside the executable. */
export function embeddedFile(path: string): Buffer | undefined {
  return embedded?.(path)
}

/** Whether the program runs as the single executable. */
export function isSingleExecutable(): boolean {
  return embedded !== undefined
}
