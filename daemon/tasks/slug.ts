// A task name as a branch and folder name: lowercase ASCII letters, digits and '-', at most
// 48 characters (DESIGN §3). Accents are folded ("Café" → "cafe"); nothing else survives, so a
// hostile name cannot produce an option, a path or an invalid ref.
export function slugify(name: string, max = 48): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
  return slug === '' ? 'task' : slug;
}
